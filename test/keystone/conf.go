package keystone

import (
	"fmt"
	"os"
	"path/filepath"
)

// Paths of one Keystone state directory (an instance or the template).
type layout struct{ dir string }

func (l layout) conf() string           { return filepath.Join(l.dir, "keystone.conf") }
func (l layout) db() string             { return filepath.Join(l.dir, "keystone.db") }
func (l layout) fernetKeys() string     { return filepath.Join(l.dir, "fernet-keys") }
func (l layout) credentialKeys() string { return filepath.Join(l.dir, "credential-keys") }
func (l layout) logDir() string         { return filepath.Join(l.dir, "log") }
func (l layout) keystoneLog() string    { return filepath.Join(l.logDir(), "keystone.log") }
func (l layout) uwsgiLog() string       { return filepath.Join(l.logDir(), "uwsgi.log") }
func (l layout) uwsgiStderr() string    { return filepath.Join(l.logDir(), "uwsgi-stderr.log") }

// writeConf writes keystone.conf for the directory. Without a cache Keystone
// issues about 200 SQLite queries to validate one token (0.5 s a request on
// this machine); the in-process memory cache brings that to about 15 ms and
// stays coherent because uwsgi runs one process, which invalidates its own
// cache on every write. bcrypt runs with its minimum of 4 rounds because every password
// authentication and application-credential check hashes, and 12 rounds cost
// about 0.3 s each on this machine.
func (l layout) writeConf() error {
	if err := os.MkdirAll(l.logDir(), 0o700); err != nil {
		return err
	}
	conf := fmt.Sprintf(`[DEFAULT]
log_file = %[1]s
use_stderr = false

[database]
connection = sqlite:///%[2]s

[token]
provider = fernet

[fernet_tokens]
key_repository = %[3]s

[fernet_receipts]
key_repository = %[3]s

[credential]
key_repository = %[4]s

[cache]
enabled = true
backend = dogpile.cache.memory

[identity]
password_hash_algorithm = bcrypt
password_hash_rounds = 4
`, l.keystoneLog(), l.db(), l.fernetKeys(), l.credentialKeys())
	return os.WriteFile(l.conf(), []byte(conf), 0o600)
}
