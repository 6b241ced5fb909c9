package gemm

import "unsafe"

// packA copies rows i0..i0+mb-1, steps l0..l0+kb-1 (the step block) of
// op(A) into dst as panels of mr rows: panel p holds, step by step, the mr
// values of rows p*mr.., scaled by alpha, with rows past mb zero.
func (j *job[T]) packA(dst []T, i0, mb int) {
	trans, a, lda := j.a.trans, j.a.data, j.a.stride
	l0, kb, mr, alpha := j.pc, j.kb, j.cf.mr, j.alpha
	for p := 0; p < mb; p += mr {
		rows := min(mr, mb-p)
		d := dst[p*kb : (p+mr)*kb]
		if trans && rows == mr && alpha == 1 && packRows(d, a[l0*lda+i0+p:], lda, kb, mr) {
			continue
		}
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
		if rows == mr && alpha == 1 && packTransposed(d, a[(i0+p)*lda+l0:], lda, kb, mr) {
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
	if trans && cols == nr && packTransposed(d, b[j*ldb+l0:], ldb, kb, nr) {
		return
	}
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
	// A loop, not copy and clear: the panel packed here is the last, of
	// fewer than nr columns (the full ones are read in place), where a
	// call to memmove and memclr for each step costs more than its moves.
	for l := range kb {
		out := d[l*nr : (l+1)*nr]
		src := b[(l0+l)*ldb+j:][:cols]
		for c, v := range src {
			out[c] = v
		}
		for c := cols; c < nr; c++ {
			out[c] = 0
		}
	}
}

// packRows copies kb rows of mr values, lda apart in src, to dst's
// consecutive rows of mr, by the vector moves of copyRows (their bits
// unchanged), and reports whether it did: where this build has the
// kernels and a row is 24, 48 or 96 bytes (a micro-kernel's mr of 6 or 12
// values). A loop over a row's few values costs several times the moves.
func packRows[T float](dst, src []T, lda, kb, mr int) bool {
	if !haveKernels || kb == 0 {
		return false
	}
	size := int(unsafe.Sizeof(dst[0]))
	width := mr * size
	if width != 24 && width != 48 && width != 96 {
		return false
	}
	if len(src) < (kb-1)*lda+mr || len(dst) < kb*mr {
		return false
	}
	copyRows(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), lda*size, kb, width)
	return true
}

// packTransposed packs the mr rows of kb values, lda apart in src, as kb
// steps of mr values at dst (dst[l*mr+r] = src[r*lda+l]), and reports
// whether it did: where this build has a transpose routine for mr rows of
// T (transposer), on the steps in fours and a loop on the rest. A loop over every value writes each to its own place, mr values
// apart.
func packTransposed[T float](dst, src []T, lda, kb, mr int) bool {
	size := int(unsafe.Sizeof(dst[0]))
	transpose := transposer(mr, size)
	if transpose == nil || kb < 4 {
		return false
	}
	if len(src) < (mr-1)*lda+kb || len(dst) < kb*mr {
		return false
	}
	kb4 := kb &^ 3
	transpose(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), lda*size, kb4)
	for r := range mr {
		row := src[r*lda:][:kb]
		for l := kb4; l < kb; l++ {
			dst[l*mr+r] = row[l]
		}
	}
	return true
}
