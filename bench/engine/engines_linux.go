package engine

// engineTable lists the engines, in the order help and the web form show
// them. Adding an engine: one file that declares its Engine (name, flags,
// options, modes, constructor) and one row here.
var engineTable = []*Engine{
	&ioURingEngine,
	&libaioEngine,
	&psyncEngine,
	&syncEngine,
	&vsyncEngine,
	&pvsyncEngine,
	&pvsync2Engine,
	&nullEngine,
}
