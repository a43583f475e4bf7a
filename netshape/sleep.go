package netshape

import "time"

// fineWait is how much of a wait for a due time is slept precisely. Go's
// timers on Linux wake about a millisecond late for short durations (the
// runtime's poller sleeps in whole milliseconds), which would add up to a
// millisecond to every delay. So a wait ends with sleep, which on Linux
// blocks its thread in nanosleep(2) and wakes within tens of microseconds;
// the longer part of a wait is on a timer, where Close and deadlines can
// interrupt it. A Read or the flusher in that last stretch notices Close
// or a deadline at its end, at most fineWait late.
const fineWait = 2 * time.Millisecond
