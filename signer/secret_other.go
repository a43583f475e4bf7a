//go:build !unix

package signer

import "io/fs"

// checkSecretFileOwner checks nothing where permissions are not Unix mode
// bits (Windows keeps them in ACLs).
func checkSecretFileOwner(string, fs.FileInfo) error { return nil }
