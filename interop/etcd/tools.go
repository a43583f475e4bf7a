//go:build tools

package etcd

// The etcd server that TestMain builds (go build go.etcd.io/etcd/server/v3).
import _ "go.etcd.io/etcd/server/v3"
