package magnum

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/magnum-capi/magnum-capi/test/ports"
)

// RabbitMQ is Debian's rabbitmq-server run by the test on free ports, with
// its node name, Erlang port mapper and state its own, so it never meets the
// system's broker or another test run's. Users and virtual hosts are
// imported from a definitions file at boot (no rabbitmqctl needed).
type RabbitMQ struct {
	Port  int
	dir   string
	epmd  *process
	proc  *process
	users map[string]string
}

// rabbitmqServer is the upstream server script of Debian's package; the
// /usr/sbin wrapper switches to the rabbitmq user and drops the environment
// that keeps this broker apart.
const rabbitmqServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// StartRabbitMQ serves a broker with one user per virtual host (vhost ->
// password; the user is named after the vhost).
func StartRabbitMQ(ctx context.Context, dir string, vhosts map[string]string) (*RabbitMQ, error) {
	if _, err := os.Stat(rabbitmqServer); err != nil {
		return nil, fmt.Errorf("%s missing: run hack/deps.sh (Debian package rabbitmq-server)", rabbitmqServer)
	}
	r := &RabbitMQ{dir: dir, users: vhosts}
	for _, d := range []string{"mnesia", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	var port [3]int
	for i := range port {
		p, err := ports.Free()
		if err != nil {
			return nil, err
		}
		port[i] = p
	}
	r.Port = port[0]
	defs := map[string]any{"users": []any{}, "vhosts": []any{}, "permissions": []any{}}
	for vhost, password := range vhosts {
		defs["users"] = append(defs["users"].([]any), map[string]any{"name": vhost, "password": password, "tags": ""})
		defs["vhosts"] = append(defs["vhosts"].([]any), map[string]any{"name": vhost})
		defs["permissions"] = append(defs["permissions"].([]any), map[string]any{
			"user": vhost, "vhost": vhost, "configure": ".*", "write": ".*", "read": ".*"})
	}
	b, _ := json.Marshal(defs)
	files := map[string]string{
		"definitions.json": string(b),
		"enabled_plugins":  "[].\n",
		"rabbitmq.conf": fmt.Sprintf("listeners.tcp.default = 127.0.0.1:%d\n"+
			"definitions.import_backend = local_filesystem\ndefinitions.local.path = %s\n",
			r.Port, filepath.Join(dir, "definitions.json")),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	env := append(os.Environ(),
		"HOME="+dir, // the Erlang cookie
		"RABBITMQ_NODENAME=rabbit-"+strconv.Itoa(r.Port)+"@localhost",
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(r.Port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(port[1]),
		"ERL_EPMD_PORT="+strconv.Itoa(port[2]),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq.conf"),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_PLUGINS_EXPAND_DIR="+filepath.Join(dir, "plugins-expand"),
		"RABBITMQ_PID_FILE="+filepath.Join(dir, "rabbitmq.pid"),
	)
	// Our own port mapper in the foreground: the broker would otherwise
	// start a daemonised one that outlives the test.
	epmd := exec.Command("epmd", "-port", strconv.Itoa(port[2]), "-address", "127.0.0.1")
	epmd.Env = env
	var err error
	if r.epmd, err = startProcess("epmd", epmd, filepath.Join(dir, "epmd.log")); err != nil {
		return nil, err
	}
	if err := r.epmd.waitFor(ctx, "epmd to listen", 30*time.Second, func() bool { return listening(port[2]) }); err != nil {
		r.Stop()
		return nil, err
	}
	cmd := exec.Command(rabbitmqServer)
	cmd.Env, cmd.Dir = env, dir
	if r.proc, err = startProcess("rabbitmq-server", cmd, filepath.Join(dir, "rabbitmq-server.log")); err != nil {
		r.Stop()
		return nil, err
	}
	// The listener opens once the broker has booted, definitions included.
	if err := r.proc.waitFor(ctx, "RabbitMQ to listen", 3*time.Minute, func() bool { return listening(r.Port) }); err != nil {
		r.Stop()
		return nil, err
	}
	return r, nil
}

// TransportURL is oslo.messaging's URL for a virtual host.
func (r *RabbitMQ) TransportURL(vhost string) string {
	return fmt.Sprintf("rabbit://%s:%s@127.0.0.1:%d/%s", vhost, r.users[vhost], r.Port, vhost)
}

// Stop stops the broker, then its port mapper.
func (r *RabbitMQ) Stop() {
	r.proc.stop(syscall.SIGTERM, 30*time.Second)
	r.epmd.stop(syscall.SIGTERM, 5*time.Second)
}
