package gemm

// packA copies rows i0..i0+mb-1, steps l0..l0+kb-1 of op(A) into dst as
// panels of mr rows: panel p holds, step by step, the mr values of rows
// p*mr.., scaled by alpha, with rows past mb zero. trans says A is stored
// transposed (op(A)[i][l] = a[l*lda+i]).
func packA[T float](dst []T, trans bool, a []T, lda, i0, mb, l0, kb, mr int, alpha T) {
	for p := 0; p < mb; p += mr {
		rows := min(mr, mb-p)
		d := dst[p*kb : (p+mr)*kb]
		if trans {
			for l := range kb {
				src := a[(l0+l)*lda+i0+p:][:rows]
				out := d[l*mr : (l+1)*mr]
				if alpha == 1 {
					copy(out, src)
				} else {
					for r, v := range src {
						out[r] = alpha * v
					}
				}
				clear(out[rows:])
			}
			continue
		}
		for r := range rows {
			src := a[(i0+p+r)*lda+l0:][:kb]
			if alpha == 1 {
				for l, v := range src {
					d[l*mr+r] = v
				}
			} else {
				for l, v := range src {
					d[l*mr+r] = alpha * v
				}
			}
		}
		for r := rows; r < mr; r++ {
			for l := range kb {
				d[l*mr+r] = 0
			}
		}
	}
}

// packB copies steps l0..l0+kb-1, columns j0..j0+nb-1 of op(B) into dst as
// panels of nr columns: panel q holds, step by step, the nr values of
// columns q*nr.., with columns past nb zero. trans says B is stored
// transposed (op(B)[l][j] = b[j*ldb+l]).
func packB[T float](dst []T, trans bool, b []T, ldb, l0, kb, j0, nb, nr int) {
	for q := 0; q < nb; q += nr {
		packBPanel(dst[q*kb:(q+nr)*kb], trans, b, ldb, l0, kb, j0+q, min(nr, nb-q), nr)
	}
}

// packBPanel packs one panel of cols (at most nr) columns from j.
func packBPanel[T float](d []T, trans bool, b []T, ldb, l0, kb, j, cols, nr int) {
	if trans {
		for cc := range cols {
			src := b[(j+cc)*ldb+l0:][:kb]
			for l, v := range src {
				d[l*nr+cc] = v
			}
		}
		if cols < nr {
			for l := range kb {
				clear(d[l*nr+cols : (l+1)*nr])
			}
		}
		return
	}
	for l := range kb {
		out := d[l*nr : (l+1)*nr]
		copy(out, b[(l0+l)*ldb+j:][:cols])
		clear(out[cols:])
	}
}
