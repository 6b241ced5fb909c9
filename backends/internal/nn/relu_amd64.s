//go:build !purego

#include "textflag.h"

// func biasReLU64AVX2(z *float64, rows, ld, w int, b *float64)
// Per row, per 4 columns: Y1 = z + b; Y1 = max(0, Y1) (VMAXPD with the
// zero vector Y0 first: a NaN in Y1 is returned); Y1 += 0 (-0 -> +0).
TEXT ·biasReLU64AVX2(SB), NOSPLIT, $0-40
	MOVQ   z+0(FP), DI
	MOVQ   rows+8(FP), CX
	MOVQ   ld+16(FP), R8
	SHLQ   $3, R8
	MOVQ   w+24(FP), DX
	SHLQ   $3, DX
	MOVQ   b+32(FP), SI
	VXORPD Y0, Y0, Y0

row64:
	TESTQ CX, CX
	JLE   done64
	XORQ  AX, AX

col64:
	CMPQ    AX, DX
	JGE     next64
	VMOVUPD (DI)(AX*1), Y1
	VADDPD  (SI)(AX*1), Y1, Y1
	VMAXPD  Y1, Y0, Y1
	VADDPD  Y0, Y1, Y1
	VMOVUPD Y1, (DI)(AX*1)
	ADDQ    $32, AX
	JMP     col64

next64:
	ADDQ R8, DI
	DECQ CX
	JMP  row64

done64:
	VZEROUPPER
	RET

// func biasReLU32AVX2(z *float32, rows, ld, w int, b *float32)
TEXT ·biasReLU32AVX2(SB), NOSPLIT, $0-40
	MOVQ   z+0(FP), DI
	MOVQ   rows+8(FP), CX
	MOVQ   ld+16(FP), R8
	SHLQ   $2, R8
	MOVQ   w+24(FP), DX
	SHLQ   $2, DX
	MOVQ   b+32(FP), SI
	VXORPS Y0, Y0, Y0

row32:
	TESTQ CX, CX
	JLE   done32
	XORQ  AX, AX

col32:
	CMPQ    AX, DX
	JGE     next32
	VMOVUPS (DI)(AX*1), Y1
	VADDPS  (SI)(AX*1), Y1, Y1
	VMAXPS  Y1, Y0, Y1
	VADDPS  Y0, Y1, Y1
	VMOVUPS Y1, (DI)(AX*1)
	ADDQ    $32, AX
	JMP     col32

next32:
	ADDQ R8, DI
	DECQ CX
	JMP  row32

done32:
	VZEROUPPER
	RET

// func reluMask64AVX2(d, act *float64, n int)
// Y2 = (act's bits == 0) per lane (an integer compare: -0 and NaN kept);
// d = d AND NOT Y2.
TEXT ·reluMask64AVX2(SB), NOSPLIT, $0-24
	MOVQ   d+0(FP), DI
	MOVQ   act+8(FP), SI
	MOVQ   n+16(FP), CX
	SHLQ   $3, CX
	VPXOR  Y0, Y0, Y0
	XORQ   AX, AX

mask64:
	CMPQ     AX, CX
	JGE      mdone64
	VMOVDQU  (SI)(AX*1), Y1
	VPCMPEQQ Y0, Y1, Y2
	VPANDN   (DI)(AX*1), Y2, Y3
	VMOVDQU  Y3, (DI)(AX*1)
	ADDQ     $32, AX
	JMP      mask64

mdone64:
	VZEROUPPER
	RET

// func reluMask32AVX2(d, act *float32, n int)
TEXT ·reluMask32AVX2(SB), NOSPLIT, $0-24
	MOVQ   d+0(FP), DI
	MOVQ   act+8(FP), SI
	MOVQ   n+16(FP), CX
	SHLQ   $2, CX
	VPXOR  Y0, Y0, Y0
	XORQ   AX, AX

mask32:
	CMPQ     AX, CX
	JGE      mdone32
	VMOVDQU  (SI)(AX*1), Y1
	VPCMPEQD Y0, Y1, Y2
	VPANDN   (DI)(AX*1), Y2, Y3
	VMOVDQU  Y3, (DI)(AX*1)
	ADDQ     $32, AX
	JMP      mask32

mdone32:
	VZEROUPPER
	RET
