package dkls23

// lagrange returns party i's Lagrange coefficient at 0 for the signing set
// set: Π_{j ∈ set, j ≠ i} j / (j − i). It turns i's Shamir share into an
// additive share of the key (DKLS23 Protocol 3.6, "sk_i = λ_i·p(i)").
func lagrange(i int, set []int) Scalar { return lagrangeAt(i, set, 0) }

// lagrangeAt returns party i's Lagrange coefficient at x for set:
// Π_{j ≠ i} (x − j) / (i − j).
func lagrangeAt(i int, set []int, x int) Scalar {
	var num, den Scalar
	num.SetInt(1)
	den.SetInt(1)
	for _, j := range set {
		if j == i {
			continue
		}
		var sj, si, sx Scalar
		sj.SetInt(uint32(j))
		si.SetInt(uint32(i))
		sx.SetInt(uint32(x))
		// (x − j) / (i − j)
		sj.Negate()
		num.Mul(sx.Add(&sj))
		den.Mul(si.Add(&sj))
	}
	den.InverseNonConst()
	return *num.Mul(&den)
}
