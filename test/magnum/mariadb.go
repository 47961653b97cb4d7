package magnum

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/magnum-capi/magnum-capi/test/ports"
)

// MariaDB is Debian's MariaDB server (mariadb-server-core: the same mariadbd
// as mariadb-server, without the system service that package enables), run
// by the test on a free port with its data in a temporary directory.
type MariaDB struct {
	Port   int
	dir    string
	socket string
	proc   *process
}

// StartMariaDB initialises a data directory and serves it on 127.0.0.1.
func StartMariaDB(ctx context.Context, dir string) (*MariaDB, error) {
	for _, bin := range []string{"/usr/sbin/mariadbd", "/usr/bin/mariadb-install-db", "/usr/bin/mariadb"} {
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("%s missing: run hack/deps.sh (Debian packages mariadb-server-core mariadb-client-core)", bin)
		}
	}
	m := &MariaDB{dir: dir, socket: filepath.Join(dir, "mysqld.sock")}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	install := exec.CommandContext(ctx, "mariadb-install-db", "--no-defaults", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--user="+currentUser())
	if out, err := install.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %w\n%s", err, out)
	}
	var err error
	if m.Port, err = ports.Free(); err != nil {
		return nil, err
	}
	cmd := exec.Command("mariadbd", "--no-defaults", "--datadir="+data, "--socket="+m.socket,
		"--port="+strconv.Itoa(m.Port), "--bind-address=127.0.0.1", "--user="+currentUser(),
		"--skip-name-resolve", "--pid-file="+filepath.Join(dir, "mariadbd.pid"),
		// What Debian's mariadb-server sets (mariadb.conf.d/50-server.cnf)
		// and databases made by `CREATE DATABASE magnum` inherit: MariaDB's
		// own default, latin1, makes Magnum's nodegroup table refuse any
		// non-Latin-1 status_reason (the conductor then fails with DBError).
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci",
		// Small: a test database, two cores shared with everything else.
		"--innodb-buffer-pool-size=64M", "--innodb-log-file-size=16M", "--max-connections=500")
	if m.proc, err = startProcess("mariadbd", cmd, filepath.Join(dir, "mariadbd.log")); err != nil {
		return nil, err
	}
	if err := m.proc.waitFor(ctx, "MariaDB to accept connections", time.Minute, func() bool {
		_, err := m.SQL(ctx, "SELECT 1")
		return err == nil
	}); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

func currentUser() string {
	if os.Geteuid() == 0 {
		return "root"
	}
	return strconv.Itoa(os.Geteuid())
}

// SQL runs statements as root over the socket and returns the output
// (tab-separated, no headers).
func (m *MariaDB) SQL(ctx context.Context, statements string) (string, error) {
	out, err := exec.CommandContext(ctx, "mariadb", "--no-defaults", "-S", m.socket, "-uroot",
		"--batch", "--skip-column-names", "-e", statements).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mariadb: %w: %s", err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// CreateDatabase makes a database and a user with every right on it,
// reachable from 127.0.0.1, as Magnum's install guide does.
func (m *MariaDB) CreateDatabase(ctx context.Context, name, user, password string) error {
	_, err := m.SQL(ctx, fmt.Sprintf(
		"CREATE DATABASE %[1]s; CREATE USER IF NOT EXISTS '%[2]s'@'127.0.0.1' IDENTIFIED BY '%[3]s'; "+
			"GRANT ALL PRIVILEGES ON %[1]s.* TO '%[2]s'@'127.0.0.1';", name, user, password))
	return err
}

// URL is the SQLAlchemy URL of a database for user.
func (m *MariaDB) URL(database, user, password string) string {
	return fmt.Sprintf("mysql+pymysql://%s:%s@127.0.0.1:%d/%s", user, password, m.Port, database)
}

// Stop shuts MariaDB down.
func (m *MariaDB) Stop() {
	m.proc.stop(syscall.SIGTERM, 30*time.Second)
}
