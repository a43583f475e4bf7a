package etcdstore

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// ParseURL reads a state URL:
//
//	etcd://host:port,host:port,host:port/prefix?ca=FILE&cert=FILE&key=FILE
//
// names the members (https), the key prefix, and the PEM files of the CA
// that signs the members' certificates and of the client's certificate
// and key. etcd+http://host:port,…/prefix is the same without TLS, for a
// cluster on loopback. An attempt=DURATION parameter sets
// Config.AttemptTimeout.
func ParseURL(s string) (Config, error) {
	bad := func(why string) (Config, error) {
		return Config{}, fmt.Errorf("etcdstore: state URL %q: %s: %w", s, why, signer.ErrInvalidArgument)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || (scheme != "etcd" && scheme != "etcd+http") {
		return bad("want etcd://host:port,…/prefix or etcd+http://…")
	}
	rest, query, _ := strings.Cut(rest, "?")
	hosts, prefix, _ := strings.Cut(rest, "/")
	if hosts == "" || prefix == "" {
		return bad("want the members' host:port list and a key prefix")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return bad(err.Error())
	}
	cfg := Config{Prefix: "/" + strings.TrimSuffix(prefix, "/")}
	http := "https://"
	if scheme == "etcd+http" {
		http = "http://"
	}
	for _, h := range strings.Split(hosts, ",") {
		if h == "" || strings.ContainsAny(h, "/@") {
			return bad(fmt.Sprintf("member %q", h))
		}
		cfg.Endpoints = append(cfg.Endpoints, http+h)
	}
	for k := range q {
		switch k {
		case "ca", "cert", "key", "attempt":
		default:
			return bad(fmt.Sprintf("unknown parameter %q", k))
		}
	}
	if a := q.Get("attempt"); a != "" {
		if cfg.AttemptTimeout, err = time.ParseDuration(a); err != nil || cfg.AttemptTimeout <= 0 {
			return bad("attempt: want a positive duration")
		}
	}
	if scheme == "etcd+http" {
		if q.Has("ca") || q.Has("cert") || q.Has("key") {
			return bad("etcd+http takes no TLS files")
		}
		return cfg, nil
	}
	if q.Get("ca") == "" || q.Get("cert") == "" || q.Get("key") == "" {
		return bad("etcd:// needs ca=, cert= and key= (the client's certificate)")
	}
	if cfg.TLS, err = TLSFiles(q.Get("ca"), q.Get("cert"), q.Get("key")); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
