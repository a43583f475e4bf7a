package thresholdbench

import "time"

// CPUTime returns the user and system CPU time the process has used, all
// threads together, and whether the system reports it: the figure the
// rows' cpu-ms/op come from, for other protocols' rows to report alike.
func CPUTime() (time.Duration, bool) { return cpuTime() }
