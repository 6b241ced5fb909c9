package gemm

// packA copies rows i0..i0+mb-1, steps l0..l0+kb-1 (the step block) of
// op(A) into dst as panels of mr rows: panel p holds, step by step, the mr
// values of rows p*mr.., scaled by alpha, with rows past mb zero.
func (j *job[T]) packA(dst []T, i0, mb int) {
	trans, a, lda := j.a.trans, j.a.data, j.a.stride
	l0, kb, mr, alpha := j.pc, j.kb, j.cf.mr, j.alpha
	for p := 0; p < mb; p += mr {
		rows := min(mr, mb-p)
		d := dst[p*kb : (p+mr)*kb]
		if trans {
			for l := range kb {
				src := a[(l0+l)*lda+i0+p:][:rows]
				out := d[l*mr : (l+1)*mr]
				if alpha == 1 {
					// A loop, not copy: rows is a few values (mr), where
					// a call to memmove costs more than the moves.
					for r, v := range src {
						out[r] = v
					}
				} else {
					for r, v := range src {
						out[r] = alpha * v
					}
				}
				for r := rows; r < mr; r++ {
					out[r] = 0
				}
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
// columns q*nr.., with columns past nb zero.
func packB[T float](dst []T, b matrix[T], l0, kb, j0, nb, nr int) {
	for q := 0; q < nb; q += nr {
		packBPanel(dst[q*kb:(q+nr)*kb], b, l0, kb, j0+q, min(nr, nb-q), nr)
	}
}

// packBPanel packs one panel of cols (at most nr) columns from j.
func packBPanel[T float](d []T, bm matrix[T], l0, kb, j, cols, nr int) {
	trans, b, ldb := bm.trans, bm.data, bm.stride
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
