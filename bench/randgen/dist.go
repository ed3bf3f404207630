package randgen

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"iolab/bench/units"
)

// fio's random distributions (lib/zipf.c, lib/gauss.c, fio's zoned
// distributions in io_u.c and options.c), parsed and drawn as fio 3.33
// does. The skewed ones draw an index from their own Tausworthe
// generator, hash it (so the hot blocks are scattered over the file, not
// packed at its start) and add an offset; zipf's normalising sum is
// computed once per file, so a draw is a few floating-point operations.

// Defaults of fio's distribution parameters (fio.h FIO_DEF_ZIPF,
// FIO_DEF_PARETO; normal's deviation defaults to 0).
const (
	defZipfTheta = 1.1
	defParetoH   = 0.2
	maxZones     = 256 // fio's ZONESPLIT_MAX
	// zipfMaxTerms caps the terms of zipf's normalising sum, as fio's
	// ZIPF_MAX_GEN does: beyond 10 million blocks the sum stops growing.
	zipfMaxTerms = 10_000_000
)

// DistKind is the model of a random_distribution.
type DistKind uint8

// fio's random distributions (FIO_RAND_DIST_*).
const (
	DistRandom   DistKind = iota // uniform
	DistZipf                     // zipf:theta
	DistPareto                   // pareto:h
	DistNormal                   // normal:deviation%
	DistZoned                    // zoned:access%/size%:…
	DistZonedAbs                 // zoned_abs:access%/size:…
)

var distNames = [...]string{"random", "zipf", "pareto", "normal", "zoned", "zoned_abs"}

func (k DistKind) String() string { return distNames[k] }

// Distribution is a parsed random_distribution.
type Distribution struct {
	Kind DistKind
	// Value is zipf's theta, pareto's h or normal's deviation in percent
	// of the region.
	Value float64
	// Center, in [0, 1], moves the distribution's base when HasCenter
	// (fio's optional second number for zipf, pareto and normal).
	Center    float64
	HasCenter bool
	// Zones of zoned and zoned_abs, in order from the region's start.
	Zones []Zone
}

// Zone is one zone of a zoned distribution: Access percent of the random
// I/Os go to Size, which is a percentage of the region (zoned) or bytes
// (zoned_abs).
type Zone struct {
	Access int
	Size   int64
}

// IsZero reports whether d is the default, uniform distribution.
func (d Distribution) IsZero() bool { return d.Kind == DistRandom }

// ParseDistribution reads a random_distribution value as fio 3.33 does:
// random; zipf[:theta[:center]]; pareto[:h[:center]];
// normal[:deviation[:center]]; zoned:A/S:…, with A percent of the random
// I/Os going to the next S percent of the region; zoned_abs:A/SIZE:…,
// the same with sizes in bytes.
func ParseDistribution(v string) (Distribution, error) {
	v = strings.TrimSpace(v)
	if strings.Contains(v, ",") {
		// fio's HOWTO describes zones per direction after commas, but
		// fio 3.33's option parser refuses any comma in this option
		// (opt_len in parse.c), whatever follows it.
		return Distribution{}, fmt.Errorf("%q: fio 3.33 refuses a comma in random_distribution (its parser cannot take per-direction values); give one distribution for reads and writes", v)
	}
	name, rest, hasRest := strings.Cut(v, ":")
	kind := -1
	for k, n := range distNames {
		if n == name {
			kind = k
		}
	}
	if kind < 0 {
		msg := fmt.Sprintf("%q is not one of %s", name, strings.Join(distNames[:], ", "))
		if s := units.Closest(name, distNames[:]); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return Distribution{}, errors.New(msg)
	}
	d := Distribution{Kind: DistKind(kind)}
	switch d.Kind {
	case DistRandom:
		if hasRest {
			return Distribution{}, fmt.Errorf("%q: random (uniform) takes no value", v)
		}
		return d, nil
	case DistZoned, DistZonedAbs:
		if !hasRest || strings.TrimSpace(rest) == "" {
			return Distribution{}, fmt.Errorf("%q: %s needs its zones (e.g. %s)", v, name, zonedExample(d.Kind))
		}
		zones, err := parseZones(strings.TrimSpace(rest), d.Kind)
		if err != nil {
			return Distribution{}, fmt.Errorf("%q: %v", v, err)
		}
		d.Zones = zones
		return d, nil
	}
	d.Value = [...]float64{DistZipf: defZipfTheta, DistPareto: defParetoH, DistNormal: 0}[d.Kind]
	if hasRest {
		val, center, hasCenter := strings.Cut(rest, ":")
		f, err := parseFloat(val)
		if err != nil {
			return Distribution{}, fmt.Errorf("%q: %q is not a number (e.g. %s:1.2)", v, val, name)
		}
		d.Value = f
		if hasCenter {
			c, err := parseFloat(center)
			if err != nil {
				return Distribution{}, fmt.Errorf("%q: center %q is not a number (e.g. %s:%g:0.25)", v, center, name, d.Value)
			}
			if c < 0 || c > 1 {
				return Distribution{}, fmt.Errorf("%q: the center must be in [0, 1] (a fraction of the region)", v)
			}
			d.Center, d.HasCenter = c, true
		}
	}
	switch {
	case d.Kind == DistZipf && d.Value == 1:
		return Distribution{}, fmt.Errorf("%q: zipf's theta must differ from 1.0", v)
	case d.Kind == DistZipf && d.Value < 0:
		return Distribution{}, fmt.Errorf("%q: zipf's theta must not be negative (0 is uniform; fio skews more the larger it is, e.g. 1.2)", v)
	case d.Kind == DistPareto && (d.Value <= 0 || d.Value >= 1):
		return Distribution{}, fmt.Errorf("%q: pareto's h must be above 0 and below 1", v)
	case d.Kind == DistNormal && (d.Value < 0 || d.Value >= 100):
		return Distribution{}, fmt.Errorf("%q: normal's deviation must be in [0, 100) percent of the region", v)
	}
	return d, nil
}

func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, errors.New("not a number")
	}
	return f, nil
}

func zonedExample(k DistKind) string {
	if k == DistZonedAbs {
		return "zoned_abs:60/20g:30/100g:10/500g"
	}
	return "zoned:60/10:30/20:8/30:2/40"
}

// parseZones reads zones as fio's split_parse_ddir and zone_split_ddir
// do: A/S pairs separated by colons, up to the first empty one; the
// access percentages must add up to exactly 100. In zoned, a size above
// 100 counts as 100 and sizes left out ("20" or "20/") or 0 share what the others leave
// of 100 — with a single zone that share is 0, as in fio. In zoned_abs,
// a size left out is 0 bytes.
func parseZones(s string, kind DistKind) ([]Zone, error) {
	var zones []Zone
	missing := 0
	access, sizes := 0, int64(0)
	for item := range strings.SplitSeq(s, ":") {
		if item == "" {
			break
		}
		if len(zones) == maxZones {
			return nil, fmt.Errorf("more than %d zones", maxZones)
		}
		a, size, hasSize := strings.Cut(item, "/")
		var z Zone
		n, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil || n < 0 || n > 100 {
			return nil, fmt.Errorf("zone %q: %q is not an access percentage from 0 to 100 (e.g. %s)", item, a, zonedExample(kind))
		}
		z.Access = n
		switch {
		case kind == DistZonedAbs && hasSize:
			if z.Size, err = units.ParseSize(strings.TrimSpace(size)); err != nil {
				return nil, fmt.Errorf("zone %q: %v", item, err)
			}
		case hasSize && strings.TrimSpace(size) == "":
			// "20/" leaves the size out, as fio's atoi of nothing does
			// (fio's examples/rand-zones.fio ends with one).
		case hasSize:
			p, err := strconv.Atoi(strings.TrimSpace(size))
			if err != nil || p < 0 {
				return nil, fmt.Errorf("zone %q: %q is not a size percentage (e.g. %s)", item, size, zonedExample(kind))
			}
			z.Size = min(int64(p), 100)
		}
		if kind == DistZoned && z.Size == 0 {
			z.Size = -1
			missing++
		} else if kind == DistZoned {
			sizes += z.Size
		}
		access += z.Access
		zones = append(zones, z)
	}
	if len(zones) == 0 {
		return nil, fmt.Errorf("no zones (e.g. %s)", zonedExample(kind))
	}
	if access > 100 || sizes > 100 {
		return nil, errors.New("the zones' percentages add up to more than 100")
	}
	if access < 100 {
		return nil, fmt.Errorf("the access percentages add up to %d, not 100", access)
	}
	if missing > 0 {
		if missing == 1 && len(zones) == 1 {
			sizes = 100
		}
		for i := range zones {
			if zones[i].Size < 0 {
				zones[i].Size = (100 - sizes) / int64(missing)
			}
		}
	}
	return zones, nil
}

// String writes d as random_distribution takes it.
func (d Distribution) String() string {
	switch d.Kind {
	case DistRandom:
		return "random"
	case DistZoned, DistZonedAbs:
		var b strings.Builder
		b.WriteString(d.Kind.String())
		for _, z := range d.Zones {
			b.WriteString(":" + strconv.Itoa(z.Access) + "/")
			if d.Kind == DistZonedAbs {
				b.WriteString(units.FormatSize(z.Size))
			} else {
				b.WriteString(strconv.FormatInt(z.Size, 10))
			}
		}
		return b.String()
	}
	s := d.Kind.String() + ":" + strconv.FormatFloat(d.Value, 'g', -1, 64)
	if d.HasCenter {
		s += ":" + strconv.FormatFloat(d.Center, 'g', -1, 64)
	}
	return s
}

// MarshalText writes d as fio writes the option.
func (d Distribution) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (d *Distribution) UnmarshalText(b []byte) error {
	p, err := ParseDistribution(string(b))
	if err == nil {
		*d = p
	}
	return err
}

// center is fio's random_center: -1 when not given.
func (d *Distribution) center() float64 {
	if d.HasCenter {
		return d.Center
	}
	return -1
}

// Skewed draws the blocks of one file from a zipf, pareto or normal
// distribution: fio's struct zipf_state and gauss_state.
type Skewed struct {
	kind DistKind
	rand Taus88
	n    uint64
	off  uint64 // fio's rand_off: where the hashed indexes start

	// zipf
	theta, zetan, halfPow, alpha, eta float64
	// pareto
	power float64
	// normal
	stddev uint32
	mod    fastMod // of n+1
}

// NewSkewed sets up d over n blocks with seed (zipf_init, pareto_init,
// gauss_init).
func NewSkewed(d *Distribution, n uint64, seed uint32) Skewed {
	s := Skewed{kind: d.Kind, n: n, rand: NewTaus88(uint64(seed))}
	center := d.center()
	switch d.Kind {
	case DistZipf, DistPareto:
		s.off = uint64(s.rand.Next())
		if center != -1 {
			s.off = uint64(float64(n) * center)
		}
	case DistNormal:
		if center != -1 {
			// fio stores this in an unsigned int: a center below the
			// middle wraps round 2^32.
			s.off = uint64(uint32(int64(float64(n) * (center - 0.5))))
		}
	}
	switch d.Kind {
	case DistZipf:
		s.theta = d.Value
		s.halfPow = math.Pow(0.5, s.theta)
		zeta2 := math.Pow(1.0, s.theta) + s.halfPow
		// Up to ten million terms: exp and log, not math.Pow, keep that
		// to a fraction of a second.
		for i := range min(n, zipfMaxTerms) {
			s.zetan += math.Exp(-s.theta * math.Log(float64(i+1)))
		}
		// fio computes these two at every draw; they never change.
		s.alpha = 1.0 / (1.0 - s.theta)
		s.eta = (1.0 - math.Pow(2.0/float64(n), 1.0-s.theta)) / (1.0 - zeta2/s.zetan)
	case DistPareto:
		s.power = math.Log(d.Value) / math.Log(1.0-d.Value)
	case DistNormal:
		if d.Value != 0 {
			sd := math.Ceil(float64(n) * d.Value / 100.0)
			s.stddev = uint32(min(uint64(sd), n/2))
		}
		s.mod = newFastMod(n + 1)
	}
	return s
}

// Next draws a block.
func (s *Skewed) Next() uint64 {
	var v uint64
	switch s.kind {
	case DistZipf:
		u := float64(s.rand.Next()) / math.MaxUint32
		z := u * s.zetan
		switch {
		case z < 1.0:
			v = 0
		case z < 1.0+s.halfPow:
			v = 1
		default:
			v = powFloor(float64(s.n), s.eta*u-s.eta+1.0, s.alpha)
		}
	case DistPareto:
		u := float64(s.rand.Next()) / math.MaxUint32
		v = powFloor(float64(s.n-1), u, s.power)
	case DistNormal:
		v = s.normal()
	}
	return (v*goldenRatio64 + s.off) % s.n
}

// powFloor is m·x^y truncated to an integer, as fio computes it with
// pow(3). Go's math.Pow costs three times exp and log; their result is
// within a few parts in 10^14 of it, so it truncates the same unless it
// lies that close to an integer, and there math.Pow decides.
func powFloor(m, x, y float64) uint64 {
	v := m * math.Exp(y*math.Log(x))
	if f := math.Floor(v); v-f > 1e-12*v && f+1-v > 1e-12*v {
		return uint64(v)
	}
	return uint64(m * math.Pow(x, y))
}

// normal is fio's gauss_next before the hash: the mean of twelve uniform
// draws (an Irwin-Hall bell around the middle), widened by the deviation.
func (s *Skewed) normal() uint64 {
	var sum uint64
	for range 12 {
		sum += s.mod.rem(s.rand.Next())
	}
	sum = (sum + 11) / 12
	if s.stddev != 0 {
		r := s.rand.Next()
		vr := int32(float64(s.stddev) * (float64(r) / (math.MaxUint32 + 1.0)))
		dev := vr - int32(s.stddev/2)
		// fio halves the deviation until the block stays in range; the
		// sum is unsigned, so a deviation below 0 wraps and halves too.
		// (fio would spin for ever on a sum of exactly n.)
		for dev != 0 && sum+uint64(int64(dev)) >= s.n {
			dev /= 2
		}
		sum += uint64(int64(dev))
	}
	return sum
}

// fastMod is x mod d for 32-bit x, by a multiplication instead of a
// division (Lemire, Kaser, Kurz, "Faster remainder by direct computation",
// 2019): exact for every x and d.
type fastMod struct {
	d, m uint64
}

func newFastMod(d uint64) fastMod {
	if d > math.MaxUint32 {
		return fastMod{d: d}
	}
	return fastMod{d: d, m: ^uint64(0)/d + 1}
}

func (f fastMod) rem(x uint32) uint64 {
	if f.d > math.MaxUint32 {
		return uint64(x) // x < 2^32 <= d
	}
	hi, _ := bits.Mul64(f.m*uint64(x), f.d)
	return hi
}

// ZoneSpan is where one percent of a zoned distribution's random I/Os go:
// the zone from Lo to Hi, in percent of the region (zoned) or bytes
// (zoned_abs); fio's struct zone_split_index.
type ZoneSpan struct{ Lo, Hi uint64 }

// ZoneIndex lays the zones out as fio's __td_zone_gen_index does, one
// entry for each percent of the random I/Os, so a draw from 1 to 100
// finds its zone at once.
func ZoneIndex(zones []Zone) *[100]ZoneSpan {
	var idx [100]ZoneSpan
	a, prev := 0, uint64(0)
	for _, z := range zones {
		for i := a; i < a+z.Access && i < 100; i++ {
			idx[i] = ZoneSpan{prev, prev + uint64(z.Size)}
		}
		a += z.Access
		prev += uint64(z.Size)
	}
	return &idx
}
