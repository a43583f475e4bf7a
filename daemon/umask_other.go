//go:build !unix

package daemon

import "net"

// listenPrivate is net.Listen: the platform has no umask; listenUnix's
// chmod sets the socket's mode.
func listenPrivate(network, address string) (net.Listener, error) {
	return net.Listen(network, address)
}
