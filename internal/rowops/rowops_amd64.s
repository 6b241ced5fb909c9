//go:build !purego

#include "textflag.h"

// func scaleRowsAVX2(dst *float32, ldDst int, d *float32, ldD int, rows, w8 int, a *float32, sums *float64)
// Row by row: Y0 = a[i] broadcast; for each 8 columns, Y1 = d * a[i]
// (stored to dst), widened to two groups of four float64 (Y2, Y3) and
// added to sums.
TEXT ·scaleRowsAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ ldDst+8(FP), R8
	SHLQ $2, R8
	MOVQ d+16(FP), SI
	MOVQ ldD+24(FP), R9
	SHLQ $2, R9
	MOVQ rows+32(FP), CX
	MOVQ w8+40(FP), DX
	SHLQ $2, DX
	MOVQ a+48(FP), R10
	MOVQ sums+56(FP), R11

row:
	TESTQ CX, CX
	JLE   done
	VBROADCASTSS (R10), Y0
	XORQ  AX, AX
	MOVQ  R11, BX

col:
	CMPQ         AX, DX
	JGE          next
	VMULPS       (SI)(AX*1), Y0, Y1
	VMOVUPS      Y1, (DI)(AX*1)
	VCVTPS2PD    X1, Y2
	VEXTRACTF128 $1, Y1, X3
	VCVTPS2PD    X3, Y3
	VADDPD       (BX), Y2, Y2
	VADDPD       32(BX), Y3, Y3
	VMOVUPD      Y2, (BX)
	VMOVUPD      Y3, 32(BX)
	ADDQ         $32, AX
	ADDQ         $64, BX
	JMP          col

next:
	ADDQ R8, DI
	ADDQ R9, SI
	ADDQ $4, R10
	DECQ CX
	JMP  row

done:
	VZEROUPPER
	RET

// ROWDOT(d, t, acc): for one row, Y5 = float64(t) + b (Y4), Y6 =
// float64(d) * Y5, acc += Y6, on the four columns at byte offset AX of
// the float32 rows.
#define ROWDOT(d, t, acc) \
	VCVTPS2PD (t)(AX*1), Y5; \
	VADDPD    Y4, Y5, Y5; \
	VCVTPS2PD (d)(AX*1), Y6; \
	VMULPD    Y5, Y6, Y6; \
	VADDPD    Y6, acc, acc

// func rowDots4AVX2(d *float32, ldd int, t *float32, ldt int, b *float64, w4 int, p *[4][4]float64)
// Y0..Y3: rows 0..3's four partial sums; per 4 columns Y4 = b and ROWDOT
// for each row.
TEXT ·rowDots4AVX2(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), SI
	MOVQ ldd+8(FP), DX
	SHLQ $2, DX
	LEAQ (SI)(DX*1), R8
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	MOVQ t+16(FP), DI
	MOVQ ldt+24(FP), DX
	SHLQ $2, DX
	LEAQ (DI)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	LEAQ (R12)(DX*1), R13
	MOVQ b+32(FP), BX
	MOVQ w4+40(FP), CX
	SHLQ $2, CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX

loop:
	CMPQ    AX, CX
	JGE     store
	VMOVUPD (BX)(AX*2), Y4
	ROWDOT(SI, DI, Y0)
	ROWDOT(R8, R11, Y1)
	ROWDOT(R9, R12, Y2)
	ROWDOT(R10, R13, Y3)
	ADDQ    $16, AX
	JMP     loop

store:
	MOVQ    p+48(FP), R8
	VMOVUPD Y0, 0(R8)
	VMOVUPD Y1, 32(R8)
	VMOVUPD Y2, 64(R8)
	VMOVUPD Y3, 96(R8)
	VZEROUPPER
	RET
