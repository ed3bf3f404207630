package sweep

// PlanHooks are what RunPlan tells its caller, from the goroutine that
// called RunPlan. Every field is optional.
type PlanHooks struct {
	// StepStarted is called before each step's preparation.
	StepStarted func(st *Step, total int)
	// SchedulerSwitched is called before a disk's scheduler is first
	// changed, with the one it had, so a store can restore it after a
	// crash; the returned token is handed to SchedulerRestored.
	SchedulerSwitched func(disk, original string) (token int64, err error)
	SchedulerRestored func(token int64)
	// StepDone is called as each step ends, whatever its status; an error
	// (the store failed) stops the plan.
	StepDone func(res *StepResult) error
}
