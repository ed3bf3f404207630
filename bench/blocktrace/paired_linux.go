package blocktrace

import (
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// The paired programs keep each traced bio (by address) from its queueing
// and each request from its insertion or issue in maps of the kernel's,
// and when a request completes write one record per bio in it with all
// its times: one record per I/O where the event programs write four or
// five, and nothing for user space to pair. A bio completed without a
// queueing seen (a split's piece, or one queued before the trace began)
// is written with no Queue time and marked so.

// The values the maps keep (bioVal: q, g, the sector and length at Q,
// thread, own, flags, op; rqVal: insert, issue, requeues), and the record.
const (
	bioValSize = 40
	rqValSize  = 24
	timingSize = 64

	maxBiosPerRq = 64 // bios written per completion; more stay unpaired

	flagMerged   = 1
	flagBioBased = 2
	flagNoQueue  = 4
)

// Paired kinds: splits need no program (their pieces complete unqueued).
var pairedKinds = []Kind{Queue, GetRq, Insert, Issue, Complete, BackMerge, FrontMerge, BioComplete, Requeue}

// OpenPaired traces the devices with the paired programs and hands each
// completed bio to sink, in batches, from one goroutine.
func OpenPaired(o Options, sink func([]Bio)) (*Tracer, error) {
	t := &Tracer{}
	batcher(t, timingSize, decodeTiming, sink)
	return t.open(o, func(k Kind, l *kernelLayout, m progMaps) asm.Instructions {
		return pairedProgram(k, l, m, o.Devs, uint32(o.TGID))
	}, pairedKinds, pairedRing)
}

func decodeTiming(b []byte) Bio {
	le := binary.LittleEndian
	flags := b[62]
	return Bio{
		Queue: int64(le.Uint64(b[0:])), GetRq: int64(le.Uint64(b[8:])), Insert: int64(le.Uint64(b[16:])),
		Issue: int64(le.Uint64(b[24:])), Complete: int64(le.Uint64(b[32:])),
		Sector: le.Uint64(b[40:]), Sectors: le.Uint32(b[48:]), Dev: le.Uint32(b[52:]), TID: le.Uint32(b[56:]),
		Op: opLetter(b[60]), Own: b[61] != 0, Requeues: int(b[63]),
		Merged: flags&flagMerged != 0, BioBased: flags&flagBioBased != 0, Split: flags&flagNoQueue != 0,
	}
}

// Stack slots of the paired programs.
const (
	pKey    = -8   // a bio's or request's address, a map key
	pRqKey  = -16  // the completing request's address
	pTime   = -24  // the event's time
	pR      = -32  // the request's value, or 0
	pNB     = -40  // bytes completed
	pSum    = -48  // bytes of the bios written so far
	pMerged = -56  // flagMerged when the request holds several bios
	pV      = -64  // a bio's value
	pVal    = -104 // a value being built (40 bytes)
	pDrop   = -108 // the drop counter's key
	pSlot   = -120 // the bio's slot, or 0 when it is in the hash map
	pIdx    = -124 // a slot's index, a map key
	pKeyS   = -136 // the address at pKey, as a number
)

// pairedProgram is the paired program of one tracepoint.
func pairedProgram(k Kind, l *kernelLayout, m progMaps, devs []uint32, tgid uint32) asm.Instructions {
	isRq := k == Insert || k == Issue || k == Complete || k == Requeue
	arg := int16(0)
	if k == BioComplete {
		arg = 1
	}
	ld := func(dst, src asm.Register, mb member) asm.Instruction {
		sz := map[int]asm.Size{1: asm.Byte, 2: asm.Half, 4: asm.Word, 8: asm.DWord}[mb.size]
		return asm.LoadMem(dst, src, int16(mb.off), sz)
	}
	key := func(slot int16) asm.Instructions { // R2 = &slot
		return asm.Instructions{asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, int32(slot))}
	}
	lookup := func(mp int, slot int16) asm.Instructions {
		return append(asm.Instructions{asm.LoadMapPtr(asm.R1, mp)}, append(key(slot), asm.FnMapLookupElem.Call())...)
	}
	update := func(mp int, slot, val int16) asm.Instructions {
		insns := append(asm.Instructions{asm.LoadMapPtr(asm.R1, mp)}, key(slot)...)
		return append(insns, asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, int32(val)), asm.Mov.Imm(asm.R4, 0), asm.FnMapUpdateElem.Call())
	}
	del := func(mp int, slot int16) asm.Instructions {
		return append(asm.Instructions{asm.LoadMapPtr(asm.R1, mp)}, append(key(slot), asm.FnMapDeleteElem.Call())...)
	}
	bios, reqs := m.bios.FD(), m.reqs.FD()

	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R7, asm.R6, arg*8, asm.DWord),
	}
	if isRq {
		insns = append(insns, ld(asm.R1, asm.R7, l.rqQ), ld(asm.R1, asm.R1, l.qDisk),
			ld(asm.R2, asm.R1, l.diskMajor), ld(asm.R3, asm.R1, l.diskFirstMinor),
			asm.LSh.Imm(asm.R2, 20), asm.Or.Reg(asm.R2, asm.R3))
	} else {
		insns = append(insns, ld(asm.R1, asm.R7, l.bioBdev), ld(asm.R2, asm.R1, l.bdevDev))
	}
	for _, d := range devs {
		insns = append(insns, asm.JEq.Imm(asm.R2, int32(d), "traced"))
	}
	insns = append(insns,
		asm.Ja.Label("exit"),
		asm.Mov.Reg(asm.R9, asm.R2).WithSymbol("traced"),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, pTime, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, pKey, asm.R7, asm.DWord),
	)
	switch k {
	case Queue:
		insns = append(insns,
			asm.LoadMem(asm.R1, asm.RFP, pTime, asm.DWord),
			asm.StoreMem(asm.RFP, pVal+0, asm.R1, asm.DWord),
			stImm64(asm.RFP, pVal+8, 0),
			ld(asm.R1, asm.R7, l.bioSector),
			asm.StoreMem(asm.RFP, pVal+16, asm.R1, asm.DWord),
			ld(asm.R1, asm.R7, l.bioSize),
			asm.RSh.Imm(asm.R1, 9),
			asm.StoreMem(asm.RFP, pVal+28, asm.R1, asm.Word),
			stImm64(asm.RFP, pVal+32, 0), // own, flags, op, padding
			ld(asm.R1, asm.R7, l.bioOpf),
			asm.StoreMem(asm.RFP, pVal+34, asm.R1, asm.Byte),
			asm.FnGetCurrentPidTgid.Call(),
			asm.StoreMem(asm.RFP, pVal+24, asm.R0, asm.Word),
			asm.RSh.Imm(asm.R0, 32),
			asm.JNE.Imm(asm.R0, int32(tgid), "store"),
			asm.StoreImm(asm.RFP, pVal+32, 1, asm.Byte),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("store"),
		)
		insns = append(insns, slotOf(m, pKey, "")...)
		insns = append(insns,
			asm.JEq.Imm(asm.R0, 0, "hash"),
			asm.Mov.Reg(asm.R8, asm.R0),
			// Claim the slot when it is free, or held by this address
			// (a completion never seen).
			asm.Mov.Imm(asm.R0, 0),
			asm.LoadMem(asm.R1, asm.RFP, pKeyS, asm.DWord),
			cmpXchg64(asm.R8, asm.R1, 0),
			asm.JEq.Imm(asm.R0, 0, "claimed"),
			asm.LoadMem(asm.R1, asm.RFP, pKeyS, asm.DWord),
			asm.JNE.Reg(asm.R0, asm.R1, "hash"),
			asm.Mov.Reg(asm.R1, asm.R8).WithSymbol("claimed"))
		for off := int16(0); off < bioValSize; off += 8 {
			insns = append(insns,
				asm.LoadMem(asm.R2, asm.RFP, pVal+off, asm.DWord),
				asm.StoreMem(asm.R1, 8+off, asm.R2, asm.DWord))
		}
		upd := update(bios, pKey, pVal)
		upd[0] = upd[0].WithSymbol("hash")
		insns = append(insns, asm.Ja.Label("exit"))
		insns = append(insns, upd...)
	case GetRq:
		insns = append(insns, findBio(m, "")...)
		insns = append(insns,
			asm.JEq.Imm(asm.R0, 0, "exit"),
			asm.LoadMem(asm.R1, asm.RFP, pTime, asm.DWord),
			asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord))
	case BackMerge, FrontMerge:
		insns = append(insns, findBio(m, "")...)
		insns = append(insns,
			asm.JEq.Imm(asm.R0, 0, "exit"),
			asm.StoreImm(asm.R0, 33, flagMerged, asm.Byte))
	case Insert, Issue:
		at := int16(0) // insert
		if k == Issue {
			at = 8
		}
		insns = append(insns, lookup(reqs, pKey)...)
		if k == Issue {
			insns = append(insns,
				asm.JEq.Imm(asm.R0, 0, "new"),
				asm.LoadMem(asm.R1, asm.RFP, pTime, asm.DWord),
				asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord),
				asm.Ja.Label("exit"))
		} else {
			// Inserted again after a requeue: the first insert stays.
			insns = append(insns, asm.JNE.Imm(asm.R0, 0, "exit"))
		}
		insns = append(insns,
			stImm64(asm.RFP, pVal+0, 0).WithSymbol("new"),
			stImm64(asm.RFP, pVal+8, 0),
			stImm64(asm.RFP, pVal+16, 0),
			asm.LoadMem(asm.R1, asm.RFP, pTime, asm.DWord),
			asm.StoreMem(asm.RFP, pVal+at, asm.R1, asm.DWord))
		insns = append(insns, update(reqs, pKey, pVal)...)
	case Requeue:
		insns = append(insns, lookup(reqs, pKey)...)
		insns = append(insns,
			asm.JEq.Imm(asm.R0, 0, "exit"),
			stImm64(asm.R0, 8, 0),
			asm.LoadMem(asm.R1, asm.R0, 16, asm.Word),
			asm.Add.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, 16, asm.R1, asm.Word))
	case BioComplete:
		insns = append(insns, findBio(m, "")...)
		insns = append(insns,
			asm.JEq.Imm(asm.R0, 0, "exit"),
			asm.StoreMem(asm.RFP, pV, asm.R0, asm.DWord),
			stImm64(asm.RFP, pR, 0),
			stImm64(asm.RFP, pMerged, flagBioBased))
		insns = append(insns, emitTiming(m, "bc", false, l)...)
		insns = append(insns, freeBio(m, "")...)
	case Complete:
		insns = append(insns, asm.StoreMem(asm.RFP, pRqKey, asm.R7, asm.DWord))
		insns = append(insns, lookup(reqs, pRqKey)...)
		insns = append(insns,
			asm.StoreMem(asm.RFP, pR, asm.R0, asm.DWord),
			asm.LoadMem(asm.R1, asm.R6, 16, asm.DWord), // nr_bytes
			asm.LSh.Imm(asm.R1, 32),
			asm.RSh.Imm(asm.R1, 32),
			asm.StoreMem(asm.RFP, pNB, asm.R1, asm.DWord),
			stImm64(asm.RFP, pSum, 0),
			ld(asm.R8, asm.R7, l.rqBio),
			stImm64(asm.RFP, pMerged, 0),
			asm.JEq.Imm(asm.R8, 0, "done"),
			ld(asm.R1, asm.R8, l.bioNext),
			asm.JEq.Imm(asm.R1, 0, "bio0"),
			stImm64(asm.RFP, pMerged, flagMerged),
		)
		for i := range maxBiosPerRq {
			lbl := func(s string) string { return fmt.Sprintf("%s%d", s, i) }
			body := asm.Instructions{
				asm.JEq.Imm(asm.R8, 0, "done").WithSymbol(lbl("bio")),
				ld(asm.R1, asm.R8, l.bioSize),
				asm.LoadMem(asm.R2, asm.RFP, pSum, asm.DWord),
				asm.Add.Reg(asm.R2, asm.R1),
				asm.StoreMem(asm.RFP, pSum, asm.R2, asm.DWord),
				asm.LoadMem(asm.R3, asm.RFP, pNB, asm.DWord),
				asm.JGT.Reg(asm.R2, asm.R3, "done"),
				asm.StoreMem(asm.RFP, pKey, asm.R8, asm.DWord),
			}
			body = append(body, findBio(m, lbl("f"))...)
			body = append(body,
				asm.StoreMem(asm.RFP, pV, asm.R0, asm.DWord))
			body = append(body, emitTiming(m, lbl("c"), true, l)...)
			body = append(body, freeBio(m, lbl("f"))...)
			body = append(body, ld(asm.R8, asm.R8, l.bioNext))
			if i+1 < maxBiosPerRq {
				body = append(body, asm.Ja.Label(lbl2("bio", i+1)))
			}
			insns = append(insns, body...)
		}
		insns = append(insns,
			ld(asm.R1, asm.R7, l.rqDataLen).WithSymbol("done"),
			asm.LoadMem(asm.R2, asm.RFP, pNB, asm.DWord),
			asm.JLT.Reg(asm.R2, asm.R1, "exit"))
		insns = append(insns, del(reqs, pRqKey)...)
	}
	insns = append(insns,
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	)
	return insns
}

// The bios in flight are kept in slots of an array, each the bio's
// address and its value, at a hash of the address: the array's lookups
// are a few instructions the verifier writes in place, where the hash
// map's update and delete take a lock with interrupts off. A bio whose
// slot another holds goes to the hash map.
const (
	bioSlotBits = 14 // 16384 slots, 768 KiB
	bioSlotSize = 8 + bioValSize
	fibonacci64 = -7046029254386353131 // 0x9E3779B97F4A7C15, 2^64 / φ
)

// cmpXchg64 compares R0 with the 8 bytes at dst+off and, when equal,
// stores src there; R0 is left the old value (BPF_ATOMIC | BPF_CMPXCHG).
// The operation is set in the constant too: cilium/ebpf v0.22's Marshal
// reads the constant before it writes the operation there, so that
// CmpXchg.Mem alone goes out as an atomic add.
func cmpXchg64(dst, src asm.Register, off int16) asm.Instruction {
	ins := asm.CmpXchg.Mem(dst, src, asm.DWord, off)
	ins.Constant = int64(asm.CmpXchg >> 8)
	return ins
}

// slotOf sets R0 to the slot of the address at stack slot key, or 0,
// and pKeyS to the address as a number. The verifier does no arithmetic
// on a kernel pointer: the address goes through a CPU's scratch word
// and comes back a number (tracepoints run with preemption off, so only
// an interrupt's program can come between). Labels take the suffix sfx.
func slotOf(m progMaps, key int16, sfx string) asm.Instructions {
	return asm.Instructions{
		asm.StoreImm(asm.RFP, pIdx, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, m.scratch.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, pIdx),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "slotted"+sfx),
		asm.LoadMem(asm.R2, asm.RFP, key, asm.DWord),
		asm.StoreMem(asm.R0, 0, asm.R2, asm.DWord),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		// A program of an interrupt between the two (a request's
		// completion) may have used the word: then no slot.
		asm.Mov.Imm(asm.R0, 0),
		asm.JNE.Reg(asm.R1, asm.R2, "slotted"+sfx),
		asm.StoreMem(asm.RFP, pKeyS, asm.R1, asm.DWord),
		asm.LoadImm(asm.R2, fibonacci64, asm.DWord),
		asm.Mul.Reg(asm.R1, asm.R2),
		asm.RSh.Imm(asm.R1, int32(64-m.slotBits)),
		asm.StoreMem(asm.RFP, pIdx, asm.R1, asm.Word),
		asm.LoadMapPtr(asm.R1, m.slots.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, pIdx),
		asm.FnMapLookupElem.Call(),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("slotted" + sfx),
	}
}

// findBio sets R0 to the value of the bio whose address is at pKey, or
// 0, and pSlot to its slot when it has one. Labels take the suffix sfx.
func findBio(m progMaps, sfx string) asm.Instructions {
	insns := slotOf(m, pKey, sfx)
	insns = append(insns,
		asm.JEq.Imm(asm.R0, 0, "inhash"+sfx),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.LoadMem(asm.R2, asm.RFP, pKeyS, asm.DWord),
		asm.JNE.Reg(asm.R1, asm.R2, "inhash"+sfx),
		asm.StoreMem(asm.RFP, pSlot, asm.R0, asm.DWord),
		asm.Add.Imm(asm.R0, 8),
		asm.Ja.Label("found"+sfx),
		stImm64(asm.RFP, pSlot, 0).WithSymbol("inhash"+sfx),
		asm.LoadMapPtr(asm.R1, m.bios.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, pKey),
		asm.FnMapLookupElem.Call(),
		asm.Mov.Reg(asm.R0, asm.R0).WithSymbol("found"+sfx),
	)
	return insns
}

// freeBio forgets the bio findBio found: frees its slot, or deletes it
// from the hash map.
func freeBio(m progMaps, sfx string) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R1, asm.RFP, pSlot, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, "hdel"+sfx),
		stImm64(asm.R1, 0, 0),
		asm.Ja.Label("freed" + sfx),
		asm.LoadMapPtr(asm.R1, m.bios.FD()).WithSymbol("hdel" + sfx),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, pKey),
		asm.FnMapDeleteElem.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("freed" + sfx),
	}
}

func lbl2(s string, i int) string { return fmt.Sprintf("%s%d", s, i) }

// emitTiming writes one bio's record: its value at pV (0: never queued;
// withBio reads the bio at R8 for what it then lacks), the request's at
// pR (or 0), the time at pTime, the flags at pMerged, the device in R9.
// Labels take the suffix sfx.
func emitTiming(m progMaps, sfx string, withBio bool, l *kernelLayout) asm.Instructions {
	ld := func(dst, src asm.Register, mb member) asm.Instruction {
		sz := map[int]asm.Size{1: asm.Byte, 2: asm.Half, 4: asm.Word, 8: asm.DWord}[mb.size]
		return asm.LoadMem(dst, src, int16(mb.off), sz)
	}
	out := "out" + sfx
	insns := asm.Instructions{
		asm.LoadMapPtr(asm.R1, m.rb.FD()),
		asm.Mov.Imm(asm.R2, timingSize),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "drop"+sfx),
		asm.LoadMem(asm.R1, asm.RFP, pTime, asm.DWord),
		asm.StoreMem(asm.R0, 32, asm.R1, asm.DWord),
		asm.StoreMem(asm.R0, 52, asm.R9, asm.Word),
		asm.LoadMem(asm.R5, asm.RFP, pMerged, asm.DWord),
		// The request's times.
		stImm64(asm.R0, 16, 0),
		stImm64(asm.R0, 24, 0),
		asm.StoreImm(asm.R0, 63, 0, asm.Byte),
		asm.LoadMem(asm.R2, asm.RFP, pR, asm.DWord),
		asm.JEq.Imm(asm.R2, 0, "norq"+sfx),
		asm.LoadMem(asm.R1, asm.R2, 0, asm.DWord),
		asm.StoreMem(asm.R0, 16, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R2, 8, asm.DWord),
		asm.StoreMem(asm.R0, 24, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R2, 16, asm.Word),
		asm.StoreMem(asm.R0, 63, asm.R1, asm.Byte),
		// The bio's.
		asm.LoadMem(asm.R2, asm.RFP, pV, asm.DWord).WithSymbol("norq" + sfx),
		asm.JEq.Imm(asm.R2, 0, "noq"+sfx),
		asm.LoadMem(asm.R1, asm.R2, 0, asm.DWord),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R2, 8, asm.DWord),
		asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R2, 16, asm.DWord),
		asm.StoreMem(asm.R0, 40, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R2, 24, asm.Word),
		asm.StoreMem(asm.R0, 56, asm.R1, asm.Word),
		asm.LoadMem(asm.R1, asm.R2, 28, asm.Word),
		asm.StoreMem(asm.R0, 48, asm.R1, asm.Word),
		asm.LoadMem(asm.R1, asm.R2, 32, asm.Byte),
		asm.StoreMem(asm.R0, 61, asm.R1, asm.Byte),
		asm.LoadMem(asm.R1, asm.R2, 33, asm.Byte),
		asm.Or.Reg(asm.R1, asm.R5),
		asm.StoreMem(asm.R0, 62, asm.R1, asm.Byte),
		asm.LoadMem(asm.R1, asm.R2, 34, asm.Byte),
		asm.StoreMem(asm.R0, 60, asm.R1, asm.Byte),
		asm.Ja.Label("submit" + sfx),
	}
	// Never queued while traced.
	noq := asm.Instructions{
		stImm64(asm.R0, 0, 0).WithSymbol("noq" + sfx),
		stImm64(asm.R0, 8, 0),
		asm.StoreImm(asm.R0, 56, 0, asm.Word),
		asm.StoreImm(asm.R0, 61, 0, asm.Byte),
		asm.Or.Imm(asm.R5, flagNoQueue),
		asm.StoreMem(asm.R0, 62, asm.R5, asm.Byte),
	}
	if withBio {
		noq = append(noq,
			ld(asm.R1, asm.R8, l.bioSector),
			asm.StoreMem(asm.R0, 40, asm.R1, asm.DWord),
			ld(asm.R1, asm.R8, l.bioSize),
			asm.RSh.Imm(asm.R1, 9),
			asm.StoreMem(asm.R0, 48, asm.R1, asm.Word),
			ld(asm.R1, asm.R8, l.bioOpf),
			asm.StoreMem(asm.R0, 60, asm.R1, asm.Byte))
	} else {
		noq = append(noq,
			stImm64(asm.R0, 40, 0),
			asm.StoreImm(asm.R0, 48, 0, asm.Word),
			asm.StoreImm(asm.R0, 60, 0, asm.Byte))
	}
	insns = append(insns, noq...)
	insns = append(insns,
		asm.Mov.Reg(asm.R1, asm.R0).WithSymbol("submit"+sfx),
		asm.Mov.Imm(asm.R2, 1), // BPF_RB_NO_WAKEUP
		asm.FnRingbufSubmit.Call(),
		asm.Ja.Label(out),
		asm.StoreImm(asm.RFP, pDrop, 0, asm.Word).WithSymbol("drop"+sfx),
		asm.LoadMapPtr(asm.R1, m.drops.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, pDrop),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, out),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(out),
	)
	return insns
}

// stImm64 stores a 32-bit constant, sign-extended, as 8 bytes (BPF_ST |
// BPF_DW, which the kernel takes and the assembler's StoreImm does not
// make).
func stImm64(dst asm.Register, off int16, v int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: dst, Offset: off, Constant: int64(v)}
}
