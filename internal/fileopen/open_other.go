//go:build !unix

package fileopen

// openNoFollow says whether openFlags(NoFollow) refuses symbolic links
// itself: this system has no O_NOFOLLOW or O_NONBLOCK for files, so Open
// checks for a link before it opens, and for a regular file after.
const openNoFollow = false

func openFlags(Links) int { return 0 }
