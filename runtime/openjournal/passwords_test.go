package openjournal

import "testing"

// TestPasswordsFromPgx: the secrets scrubbed from messages include the
// password pgx's own DSN parser reads, also from PGPASSWORD, which no
// pattern on the DSN can see.
func TestPasswordsFromPgx(t *testing.T) {
	t.Setenv("PGPASSWORD", "from-the-environment")
	for _, c := range []struct{ dsn, want string }{
		{"postgres://app:s3cr%40t@db.example:5432/app", "s3cr@t"},
		{`host=db user=app password='it\'s' dbname=app`, "it's"},
		{"host=db user=app dbname=app", "from-the-environment"},
	} {
		got := passwords(c.dsn)
		found := false
		for _, p := range got {
			found = found || p == c.want
		}
		if !found {
			t.Errorf("passwords(%q) = %q; want %q among them", c.dsn, got, c.want)
		}
	}
}
