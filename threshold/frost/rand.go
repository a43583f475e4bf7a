package frost

import "crypto/rand"

var cryptoRand = rand.Reader
