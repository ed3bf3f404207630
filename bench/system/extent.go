package system

// Extent is one extent of a regular file as FIEMAP reports it: Length
// bytes from Logical in the file sit at Physical on its filesystem's
// device (the partition's, when the filesystem is on one).
type Extent struct {
	Logical, Physical, Length uint64
	Flags                     uint32 // FIEMAP_EXTENT_*
}

// FIEMAP's extent flags, from include/uapi/linux/fiemap.h
// and Documentation/filesystems/fiemap.rst (golang.org/x/sys/unix has
// neither).
const (
	ExtentLast       = 0x1   // FIEMAP_EXTENT_LAST
	ExtentUnknown    = 0x2   // FIEMAP_EXTENT_UNKNOWN: the data's place is not known
	ExtentDelalloc   = 0x4   // FIEMAP_EXTENT_DELALLOC: not allocated yet (sets UNKNOWN)
	ExtentEncoded    = 0x8   // FIEMAP_EXTENT_ENCODED: compressed or encrypted on disk
	ExtentEncrypted  = 0x80  // FIEMAP_EXTENT_DATA_ENCRYPTED (sets ENCODED)
	ExtentNotAligned = 0x100 // FIEMAP_EXTENT_NOT_ALIGNED
	ExtentDataInline = 0x200 // FIEMAP_EXTENT_DATA_INLINE (sets NOT_ALIGNED)
	ExtentDataTail   = 0x400 // FIEMAP_EXTENT_DATA_TAIL (sets NOT_ALIGNED)
	ExtentUnwritten  = 0x800 // FIEMAP_EXTENT_UNWRITTEN: allocated, reads as zeroes
	ExtentMerged     = 0x1000
	ExtentShared     = 0x2000
)

// ExtentsNotOnDevice are the flags of an extent whose bytes are not where
// its Physical says, one for one: an I/O there does not become a bio of
// its own at that place. An unwritten extent is allocated at its place: a
// write there is a bio at its address (a read is zeroes, with no bio).
const ExtentsNotOnDevice = ExtentUnknown | ExtentDelalloc | ExtentEncoded | ExtentNotAligned | ExtentDataInline | ExtentDataTail
