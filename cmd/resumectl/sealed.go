package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/resume"
)

// A sealed journal (resume.WithCodec) records the ids of the keys that
// seal it (resume_keys); resumectl reads them when it opens the journal.
// With the keys (-key-file, $RESUME_KEY_FILE or $RESUME_KEYS, ID:BASE64
// entries, the sealing key first, as resume.ParseKeys reads them) it
// opens the values it shows and seals the values it writes (signal
// payloads, resolved results), as a worker does. Without them it shows
// sealed values as (encrypted), and refuses to write a value, which would
// be plaintext where the workers authenticate every value, unless
// -unsealed says so (with a warning).

// sealInfo is what open found of the journal's sealing.
type sealInfo struct {
	keys   []string // the key ids the journal records, first seen first
	opened bool     // resumectl holds keys: it opens and seals values
	// raw is the journal underneath the sealing wrapper, to read values
	// that do not open with the keys given.
	raw journal.Journal
}

// keyring reads the keys o names, or nil when none is given.
func keyring(o *options) (resume.KeyedCodec, error) {
	text, from := "", ""
	switch path := firstOf(o.keyFile, os.Getenv("RESUME_KEY_FILE")); {
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("key file: %v", err)
		}
		text, from = string(b), path
	case os.Getenv("RESUME_KEYS") != "":
		text, from = os.Getenv("RESUME_KEYS"), "$RESUME_KEYS"
	default:
		return nil, nil
	}
	keys, err := resume.ParseKeys(text)
	if err != nil {
		return nil, usagef("keys of %s: %v", from, err)
	}
	ring, err := resume.NewKeyring(keys...)
	if err != nil {
		return nil, usagef("keys of %s: %v", from, err)
	}
	return ring, nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// sealing wraps j, when the journal is sealed and keys are given, to open
// and seal its values, and records in o what it found.
func (c *cli) sealing(o *options, j journal.Journal) (journal.Journal, error) {
	o.sealed = sealInfo{}
	kr, ok := journal.Find[journal.KeyRegistry](j)
	if !ok {
		return j, nil
	}
	recs, err := kr.SealingKeys(c.ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		o.sealed.keys = append(o.sealed.keys, r.KeyID)
	}
	ring, err := keyring(o)
	if err != nil || ring == nil {
		return j, err
	}
	if len(recs) == 0 {
		return j, nil // nothing sealed: values stay plain, as the workers read them
	}
	o.sealed.opened, o.sealed.raw = true, j
	return resume.SealJournal(j, ring), nil
}

// errSealedNoKey is the refusal to write a value to a sealed journal
// without its keys.
var errSealedNoKey = errors.New("the journal is sealed")

// canWriteValue checks, before a command writes a value (what), that a
// sealed journal's value will be sealed: resumectl holds its keys, or
// -unsealed says to write it in plaintext (with a warning).
func (c *cli) canWriteValue(o *options, what string) error {
	if len(o.sealed.keys) == 0 || o.sealed.opened {
		return nil
	}
	if o.unsealed {
		fmt.Fprintf(c.stderr, "resumectl: warning: the journal is sealed (keys %s) and no key is given: %s is written in plaintext (-unsealed); the workers park the run as tampered unless they read with resume.ReadUnsealed\n",
			keyList(o.sealed.keys), what)
		return nil
	}
	return fmt.Errorf("%w (keys %s) and no key is given: %s would be written in plaintext, which the workers refuse as tampered; give the keys (-key-file FILE, $RESUME_KEY_FILE or $RESUME_KEYS), or -unsealed to write it in plaintext anyway",
		errSealedNoKey, keyList(o.sealed.keys), what)
}

func keyList(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id
		if id == "" {
			out[i] = "(unnamed)"
		}
	}
	return strings.Join(out, ", ")
}

// generatedSupported names the generated-code versions this build's
// runtime runs; the references break the build when one is dropped.
var generatedSupported = func() string {
	_, _, _ = resume.SupportPackageIsVersion1, resume.SupportPackageIsVersion2, resume.SupportPackageIsVersion3
	_, _ = resume.SupportPackageIsVersion4, resume.SupportPackageIsVersion5
	return "SupportPackageIsVersion1, SupportPackageIsVersion2, SupportPackageIsVersion3, SupportPackageIsVersion4, SupportPackageIsVersion5"
}()

// versionCmd prints the module version resumectl was built from and the
// generated code its runtime runs.
func versionCmd(c *cli, o *options, args []string) error {
	if err := wantArgs(args); err != nil {
		return err
	}
	version, goVersion, rev := "(unknown)", "", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		version, goVersion = bi.Main.Version, bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	if o.json {
		return c.writeJSON(map[string]string{"module": "github.com/resumegen/resumegen", "version": version, "revision": rev, "go": goVersion, "generated_code": generatedSupported})
	}
	fmt.Fprintf(c.stdout, "resumectl %s", version)
	if rev != "" {
		fmt.Fprintf(c.stdout, " (revision %s)", rev)
	}
	fmt.Fprintf(c.stdout, ", %s\nruns code generated for resume.%s\n", goVersion, strings.ReplaceAll(generatedSupported, ", ", ", resume."))
	return nil
}

// loadRun reads a run through j; when values do not open with the keys
// given (a key missing from them), it reads the run as stored, with a
// note saying so, rather than show nothing.
func (c *cli) loadRun(o *options, j journal.Journal, runID string) (journal.RunRecord, []journal.StepRecord, string, error) {
	r, steps, err := j.LoadRun(c.ctx, runID)
	if err == nil || errors.Is(err, journal.ErrRunNotFound) || o.sealed.raw == nil {
		return r, steps, "", err
	}
	r, steps, rerr := o.sealed.raw.LoadRun(c.ctx, runID)
	if rerr != nil {
		return r, steps, "", err
	}
	return r, steps, "some values do not open with the keys given, and show as (encrypted): " + err.Error(), nil
}

// listRuns is ListRuns through j, as loadRun reads a run.
func (c *cli) listRuns(o *options, j journal.Journal, f journal.RunFilter) ([]journal.RunRecord, error) {
	runs, err := j.ListRuns(c.ctx, f)
	if err != nil && o.sealed.raw != nil {
		if raw, rerr := o.sealed.raw.ListRuns(c.ctx, f); rerr == nil {
			return raw, nil
		}
	}
	return runs, err
}

// shellArg quotes s for a POSIX shell when it holds anything but letters,
// digits and -_./:@#=+, so that a command printed to run next can be
// pasted as it is (escaped for the terminal by the writer).
func shellArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@#=+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
