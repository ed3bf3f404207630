package system

// Purge ways, in the words Purge takes and returns.
const (
	PurgeSecure  = "secure"  // BLKSECDISCARD
	PurgeDiscard = "discard" // BLKDISCARD
	PurgeZero    = "zero"    // BLKZEROOUT
)

// PurgeIoctl names a purge way's ioctl.
func PurgeIoctl(way string) string {
	switch way {
	case PurgeSecure:
		return "BLKSECDISCARD"
	case PurgeDiscard:
		return "BLKDISCARD"
	case PurgeZero:
		return "BLKZEROOUT"
	}
	return way
}
