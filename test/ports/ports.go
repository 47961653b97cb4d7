// Package ports picks TCP ports for the servers the tests start (Keystone,
// MariaDB, RabbitMQ, magnum-api, sidecars): chosen at run time on
// 127.0.0.1, since several test runs share this machine. (The Cluster API
// controllers' module, test/capicontrollers, keeps its own copy: it is a Go
// module of its own and imports nothing from this one.)
package ports

import "net"

// Free is a TCP port free on 127.0.0.1 a moment ago. The caller's server
// binds it after; a run that loses the race fails to start and says so.
func Free() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
