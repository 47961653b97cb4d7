// Command etcd is etcd's own main, built from the etcd server module so the
// test bed needs no download besides the Go module proxy.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
