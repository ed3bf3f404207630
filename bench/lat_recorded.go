package bench

// stamps says which latencies a job records and which clock reads it
// makes for them: fio's disable_lat, disable_clat, disable_slat,
// disable_bw_measurement and gtod_reduce (io_u.c account_io_completion,
// init_icd; fio.h fio_fill_issue_time).
type stamps struct {
	lat, clat, slat bool
	// issue: read the clock when a commit returns, for slat and clat.
	// fio skips it once clat, slat and bandwidth are all disabled.
	issue bool
	// complete: read the clock when a reap returns. fio skips it in the
	// same case, and then records lat from a time it never took; iolab
	// reads it whenever lat is recorded.
	complete bool
}

func newStamps(j *Job) stamps {
	s := stamps{lat: !j.DisableLat, clat: !j.DisableClat, slat: !j.DisableSlat}
	s.issue = !(j.DisableClat && j.DisableSlat && j.DisableBW)
	s.complete = s.issue || s.lat
	return s
}
