package dkls23

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
)

// OT extension: KOS15 (Keller, Orsini, Scholl, "Actively Secure OT
// Extension with Optimal Overhead", ePrint 2015/546), the
// extension DKLs19 builds its multiplication on. The
// receiver's choice bits are the xi bits of the multiplication's Bob; kosPad
// random bits follow them for the consistency check (κ + s of KOS15, s
// = 64), which the extension's sender verifies with the challenge drawn
// from a hash of the receiver's message (Fiat–Shamir, as DKLs19 §5.1
// allows).
const (
	kosPad  = kappa + 64
	otBatch = xi + kosPad    // extended transfers per multiplication
	rowLen  = otBatch / 8    // bytes of one column of the extension matrix
	colsLen = kappa * rowLen // bytes of the receiver's message u
)

// otSenderSetup is what the extension's sender (the multiplication's
// Alice) keeps from the base OTs: Δ and the seeds it chose with it.
type otSenderSetup struct {
	Delta [kappa / 8]byte
	Seeds [kappa][32]byte
}

// otReceiverSetup is what the extension's receiver (Bob) keeps: both seeds
// of each base transfer.
type otReceiverSetup struct {
	Seeds0, Seeds1 [kappa][32]byte
}

// kosMsg is the extension receiver's message: u_i = t0_i ⊕ t1_i ⊕ x for
// each of the κ columns, and the check values x̃ = Σ χ_j·x_j and t̃ = Σ
// χ_j·t_j (KOS15 Fig. 7, "Consistency check").
type kosMsg struct {
	Nonce  [32]byte // the multiplication's, see voleBob
	U      [colsLen]byte
	XTilde [16]byte
	TTilde [32]byte
}

// prgColumn expands a base seed into one column of rowLen bytes for the
// extension of session sid.
func prgColumn(seed *[32]byte, sid []byte, dst []byte) {
	var buf [32 + 32 + 4]byte
	copy(buf[:32], seed[:])
	sd := sha256.Sum256(sid)
	copy(buf[32:64], sd[:])
	for ctr := 0; len(dst) > 0; ctr++ {
		binary.BigEndian.PutUint32(buf[64:], uint32(ctr))
		h := sha256.Sum256(buf[:])
		dst = dst[copy(dst, h[:]):]
	}
}

// transpose turns κ columns of otBatch bits into otBatch rows of κ bits.
func transpose(cols *[kappa][rowLen]byte) *[otBatch][2]uint64 {
	rows := new([otBatch][2]uint64)
	for i := range kappa {
		w, sh := i/64, uint(i%64)
		for j := range otBatch {
			rows[j][w] |= uint64(bit(cols[i][:], j)) << sh
		}
	}
	return rows
}

// kosChallenge derives the check's χ_1 … χ_otBatch from the session and
// the receiver's columns.
func kosChallenge(sid []byte, u []byte) *[otBatch][2]uint64 {
	seed := newTranscript("kos-challenge").add(sid).add(u).sum()
	var out [otBatch][2]uint64
	var buf [36]byte
	copy(buf[:], seed[:])
	for j := 0; j < otBatch; j += 2 {
		binary.BigEndian.PutUint32(buf[32:], uint32(j))
		h := sha256.Sum256(buf[:])
		for k := 0; k < 2 && j+k < otBatch; k++ {
			out[j+k][0] = binary.LittleEndian.Uint64(h[16*k:])
			out[j+k][1] = binary.LittleEndian.Uint64(h[16*k+8:])
		}
	}
	return &out
}

// clmul64 is the carry-less product of a and b.
func clmul64(a, b uint64) (hi, lo uint64) {
	for i := range 64 {
		m := -(b >> uint(i) & 1)
		lo ^= (a << uint(i)) & m
		if i > 0 {
			hi ^= (a >> uint(64-i)) & m
		}
	}
	return hi, lo
}

// clmulAcc adds the carry-less 256-bit product a·b to acc. The check is
// linear over GF(2)[X], so the product is kept unreduced.
func clmulAcc(acc *[4]uint64, a, b [2]uint64) {
	h, l := clmul64(a[0], b[0])
	acc[0] ^= l
	acc[1] ^= h
	h, l = clmul64(a[0], b[1])
	acc[1] ^= l
	acc[2] ^= h
	h, l = clmul64(a[1], b[0])
	acc[1] ^= l
	acc[2] ^= h
	h, l = clmul64(a[1], b[1])
	acc[2] ^= l
	acc[3] ^= h
}

// kosReceive is the extension receiver's step for choice bits choice
// (xi bits) and padding pad (kosPad/8 random bytes): its message and its
// rows t_j, of which the first xi become its pads.
func kosReceive(setup *otReceiverSetup, sid []byte, choice []byte, pad []byte) (*kosMsg, *[otBatch][2]uint64) {
	x := make([]byte, rowLen)
	copy(x, choice[:xi/8])
	copy(x[xi/8:], pad)
	msg := new(kosMsg)
	var t0 [kappa][rowLen]byte
	var t1 [rowLen]byte
	for i := range kappa {
		prgColumn(&setup.Seeds0[i], sid, t0[i][:])
		prgColumn(&setup.Seeds1[i], sid, t1[:])
		u := msg.U[i*rowLen : (i+1)*rowLen]
		for b := range rowLen {
			u[b] = t0[i][b] ^ t1[b] ^ x[b]
		}
	}
	rows := transpose(&t0)
	chi := kosChallenge(sid, msg.U[:])
	var xt [2]uint64
	var tt [4]uint64
	for j := range otBatch {
		m := -uint64(bit(x, j))
		xt[0] ^= chi[j][0] & m
		xt[1] ^= chi[j][1] & m
		clmulAcc(&tt, rows[j], chi[j])
	}
	binary.LittleEndian.PutUint64(msg.XTilde[:], xt[0])
	binary.LittleEndian.PutUint64(msg.XTilde[8:], xt[1])
	for k := range 4 {
		binary.LittleEndian.PutUint64(msg.TTilde[8*k:], tt[k])
	}
	return msg, rows
}

// kosSend is the extension sender's step: it checks the receiver's
// message (blaming party from) and returns its rows q_j = t_j ⊕ x_j·Δ.
func kosSend(setup *otSenderSetup, from int, sid []byte, msg *kosMsg) (*[otBatch][2]uint64, error) {
	var q [kappa][rowLen]byte
	for i := range kappa {
		prgColumn(&setup.Seeds[i], sid, q[i][:])
		if bit(setup.Delta[:], i) == 1 {
			u := msg.U[i*rowLen : (i+1)*rowLen]
			for b := range rowLen {
				q[i][b] ^= u[b]
			}
		}
	}
	rows := transpose(&q)
	chi := kosChallenge(sid, msg.U[:])
	var qt [4]uint64
	for j := range otBatch {
		clmulAcc(&qt, rows[j], chi[j])
	}
	// q̃ must equal t̃ ⊕ x̃·Δ.
	want := [4]uint64{}
	for k := range 4 {
		want[k] = binary.LittleEndian.Uint64(msg.TTilde[8*k:])
	}
	xt := [2]uint64{binary.LittleEndian.Uint64(msg.XTilde[:]), binary.LittleEndian.Uint64(msg.XTilde[8:])}
	clmulAcc(&want, xt, deltaWords(&setup.Delta))
	var a, b [32]byte
	for k := range 4 {
		binary.LittleEndian.PutUint64(a[8*k:], qt[k])
		binary.LittleEndian.PutUint64(b[8*k:], want[k])
	}
	if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		return nil, abort(from, "OT extension: the KOS consistency check fails")
	}
	return rows, nil
}

// deltaWords returns Δ as two 64-bit words, bit i of Δ at bit i%64 of word
// i/64 (the layout of transpose's rows).
func deltaWords(d *[kappa / 8]byte) [2]uint64 {
	return [2]uint64{binary.LittleEndian.Uint64(d[:8]), binary.LittleEndian.Uint64(d[8:])}
}

// rowPads hashes row j into the three scalars of the correlated OT's pad
// (KOS15's correlation-robust hash), for session sid.
func rowPads(sidDigest *[32]byte, j int, row [2]uint64) [corrLen]Scalar {
	var buf [32 + 4 + 16 + 1]byte
	copy(buf[:32], sidDigest[:])
	binary.BigEndian.PutUint32(buf[32:], uint32(j))
	binary.LittleEndian.PutUint64(buf[36:], row[0])
	binary.LittleEndian.PutUint64(buf[44:], row[1])
	var out [corrLen]Scalar
	for k := range corrLen {
		buf[52] = byte(k)
		h := sha256.Sum256(buf[:])
		out[k].SetBytes(&h)
	}
	return out
}
