package daemon

import (
	"github.com/prometheus/client_golang/prometheus"
)

// nopCounter is a prometheus.Counter that counts nothing.
type nopCounter struct{ prometheus.Counter }

func (nopCounter) Inc() {}
