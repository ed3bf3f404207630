#include "textflag.h"

// func Read() uint64
TEXT ·Read(SB),NOSPLIT,$0-8
	RDTSC
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET

// func readFenced() uint64
// LFENCE on both sides: the read is taken after what comes before it (the
// in-step check's load of the shared counter) and before what follows
// (the compare-and-swap that gives it its place in the order).
TEXT ·readFenced(SB),NOSPLIT,$0-8
	LFENCE
	RDTSC
	LFENCE
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET
