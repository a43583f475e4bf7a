// Package etcd checks guard/etcdstore against etcd v3.7.3's own code, in
// a module of its own so that the main module never depends on it: an
// etcd v3.7.3 server built from its module (go.etcd.io/etcd/server/v3),
// and etcd's Go client (go.etcd.io/etcd/client/v3) reading and racing
// what the store writes through the JSON gateway.
package etcd
