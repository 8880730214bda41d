package openjournal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
	"github.com/resumegen/resumegen/runtime/openjournal"
)

func TestIsPostgres(t *testing.T) {
	for target, want := range map[string]bool{
		"postgres://app@db/jobs":                   true,
		"postgresql://app@db/jobs":                 true,
		"host=db user=app dbname=jobs":             true,
		"  dbname=jobs":                            true,
		"user=app password=x host=/run/postgresql": true,
		"service=jobs":                             true,
		"host = db dbname = jobs":                  true,
		"journal.db":                               false,
		"/var/lib/app/journal.db":                  false,
		"./host=db.db":                             false,
		"data/a=b.db":                              false,
		"file=x.db":                                false,
		"":                                         false,
	} {
		if got := openjournal.IsPostgres(target); got != want {
			t.Errorf("IsPostgres(%q) = %v, want %v", target, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	for target, want := range map[string]string{
		"postgres://app:s3cret@db/jobs":                          "postgres://app:xxxxx@db/jobs",
		"postgres://app:s3c@ret@db/jobs":                         "postgres://app:xxxxx@db/jobs",
		"postgres://app:s3cret@db:port/jobs":                     "postgres://app:xxxxx@db:port/jobs",
		"postgres://app@db/jobs?sslmode=disable&password=s3cret": "postgres://app@db/jobs?sslmode=disable&password=xxxxx",
		"host=db password=s3cret dbname=jobs":                    "host=db password=xxxxx dbname=jobs",
		"host=db password = 's3 c\\'ret' dbname=jobs":            "host=db password = xxxxx dbname=jobs",
		"host=db sslpassword=s3cret":                             "host=db sslpassword=xxxxx",
		"postgres://app@db/jobs":                                 "postgres://app@db/jobs",
		"journal.db":                                             "journal.db",
	} {
		if got := openjournal.Redact(target); got != want {
			t.Errorf("Redact(%q) = %q, want %q", target, got, want)
		}
	}
}

// TestNoPasswordInErrors is issue 10's attack: passwords appeared in the
// errors for unparsable URLs, ?password= query strings and key=value DSNs,
// and a key=value DSN was taken for a SQLite path (a file named after it,
// password included, was created). Every target below fails (a port
// nothing listens on, or a DSN that does not parse); no error repeats the
// password, and no file appears.
func TestNoPasswordInErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	const pw = "Sup3rSecretPw"
	for _, target := range []string{
		"postgres://app:" + pw + "@127.0.0.1:1/jobs?sslmode=disable&connect_timeout=2",
		"postgres://app:" + pw + "@127.0.0.1:notaport/jobs",
		"postgres://app:" + pw + "@127.0.0.1:1/jobs?sslmode=bogus",
		"postgresql://app:" + pw + "%40x@127.0.0.1:1/jobs?sslmode=disable&connect_timeout=2",
		"postgres://app@127.0.0.1:1/jobs?sslmode=disable&connect_timeout=2&password=" + pw,
		"postgres://app@127.0.0.1:1/jobs?password=" + pw + "&sslmode=nonsense",
		"postgres://app@127.0.0.1:1/jobs?password=" + pw + "&connect_timeout=x",
		"host=127.0.0.1 port=1 user=app password=" + pw + " dbname=jobs sslmode=disable connect_timeout=2",
		"host=127.0.0.1 port=1 password='" + pw + " x' sslmode=disable connect_timeout=2",
		"host=127.0.0.1 port=notaport password=" + pw,
		"host=127.0.0.1 password=" + pw + " sslmode=bogus",
		"host=127.0.0.1 password='" + pw,
	} {
		for name, open := range map[string]func(context.Context, string) (journal.Journal, error){
			"Open": openjournal.Open, "OpenReadOnly": openjournal.OpenReadOnly,
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			j, err := open(ctx, target)
			cancel()
			if err == nil {
				j.Close()
				t.Errorf("%s(%s) succeeded", name, openjournal.Redact(target))
				continue
			}
			if strings.Contains(err.Error(), pw) {
				t.Errorf("%s: the error holds the password: %v", name, err)
			}
			if !strings.Contains(err.Error(), "xxxxx") && !strings.Contains(err.Error(), "open journal") {
				t.Errorf("%s: the error names no database: %v", name, err)
			}
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("opening PostgreSQL DSNs created %s", filepath.Join(dir, e.Name()))
	}
}

// TestOpenReadOnlySQLite: a read-only open of a missing file creates none,
// and of an unrelated database says it holds no journal.
func TestOpenReadOnlySQLite(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "missing.db")
	if _, err := openjournal.OpenReadOnly(ctx, missing); err == nil {
		t.Error("OpenReadOnly of a missing file succeeded")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenReadOnly created %s", missing)
	}
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openjournal.OpenReadOnly(ctx, empty); !errors.Is(err, journal.ErrNoJournal) {
		t.Errorf("OpenReadOnly of an empty file: %v, want ErrNoJournal", err)
	}
}
