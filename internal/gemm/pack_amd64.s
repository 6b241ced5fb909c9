//go:build !purego

#include "textflag.h"

// TRANSPOSE_ARGS loads a transpose routine's arguments: dst in DI, src
// in SI, ld (the rows' distance in bytes) in DX, kb4 in CX, and sets R10
// to 3 ld and R8 to the fifth row.
#define TRANSPOSE_ARGS \
	MOVQ dst+0(FP), DI; \
	MOVQ src+8(FP), SI; \
	MOVQ ld+16(FP), DX; \
	MOVQ kb4+24(FP), CX; \
	LEAQ (DX)(DX*2), R10; \
	LEAQ (SI)(DX*4), R8

// func copyRows(dst, src unsafe.Pointer, ld, kb, width int)
TEXT ·copyRows(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	MOVQ kb+24(FP), CX
	MOVQ width+32(FP), AX
	CMPQ AX, $48
	JEQ  rows48
	CMPQ AX, $96
	JEQ  rows96

rows24:
	TESTQ   CX, CX
	JLE     done
	VMOVUPS (SI), X0
	MOVQ    16(SI), R8
	VMOVUPS X0, (DI)
	MOVQ    R8, 16(DI)
	ADDQ    DX, SI
	ADDQ    $24, DI
	DECQ    CX
	JMP     rows24

rows48:
	TESTQ   CX, CX
	JLE     done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), X1
	VMOVUPS Y0, (DI)
	VMOVUPS X1, 32(DI)
	ADDQ    DX, SI
	ADDQ    $48, DI
	DECQ    CX
	JMP     rows48

rows96:
	TESTQ   CX, CX
	JLE     done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	ADDQ    DX, SI
	ADDQ    $96, DI
	DECQ    CX
	JMP     rows96

done:
	VZEROUPPER
	RET

// TRANSPOSE4x32(base, off, step): the 4 x 4 float32 block of the rows at
// base, base+DX, base+2DX and base+R10 (four steps' values each)
// transposed in registers (unpack low and high pairs, then move halves)
// and its columns, the four rows' values of each step, stored at DI+off,
// step bytes (a step of the panel's rows) apart.
#define TRANSPOSE4x32(base, off, step) \
	VMOVUPS   (base), X0; \
	VMOVUPS   (base)(DX*1), X1; \
	VMOVUPS   (base)(DX*2), X2; \
	VMOVUPS   (base)(R10*1), X3; \
	VUNPCKLPS X1, X0, X4; \
	VUNPCKLPS X3, X2, X5; \
	VUNPCKHPS X1, X0, X6; \
	VUNPCKHPS X3, X2, X7; \
	VMOVLHPS  X5, X4, X0; \
	VMOVHLPS  X4, X5, X1; \
	VMOVLHPS  X7, X6, X2; \
	VMOVHLPS  X6, X7, X3; \
	VMOVUPS   X0, off(DI); \
	VMOVUPS   X1, off+step(DI); \
	VMOVUPS   X2, off+2*step(DI); \
	VMOVUPS   X3, off+3*step(DI)

// TRANSPOSE4x64(base, off, step): TRANSPOSE4x32 for float64: pairs
// unpacked within the 128-bit halves, then the halves swapped
// (VPERM2F128).
#define TRANSPOSE4x64(base, off, step) \
	VMOVUPD    (base), Y0; \
	VMOVUPD    (base)(DX*1), Y1; \
	VMOVUPD    (base)(DX*2), Y2; \
	VMOVUPD    (base)(R10*1), Y3; \
	VUNPCKLPD  Y1, Y0, Y4; \
	VUNPCKHPD  Y1, Y0, Y5; \
	VUNPCKLPD  Y3, Y2, Y6; \
	VUNPCKHPD  Y3, Y2, Y7; \
	VPERM2F128 $0x20, Y6, Y4, Y0; \
	VPERM2F128 $0x20, Y7, Y5, Y1; \
	VPERM2F128 $0x31, Y6, Y4, Y2; \
	VPERM2F128 $0x31, Y7, Y5, Y3; \
	VMOVUPD    Y0, off(DI); \
	VMOVUPD    Y1, off+step(DI); \
	VMOVUPD    Y2, off+2*step(DI); \
	VMOVUPD    Y3, off+3*step(DI)

// func transpose12x32(dst, src unsafe.Pointer, ld, kb4 int)
// Packs 12 rows of float32 (ld bytes apart from src) as kb4 (a multiple
// of 4) steps of 12 values at dst: four steps at a time, rows 0-3, 4-7
// and 8-11 by TRANSPOSE4x32 from SI, R8 and R9.
TEXT ·transpose12x32(SB), NOSPLIT, $0-32
	TRANSPOSE_ARGS
	LEAQ (R8)(DX*4), R9

step:
	CMPQ CX, $4
	JLT  tdone
	TRANSPOSE4x32(SI, 0, 48)
	TRANSPOSE4x32(R8, 16, 48)
	TRANSPOSE4x32(R9, 32, 48)
	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $192, DI
	SUBQ $4, CX
	JMP  step

tdone:
	RET

// func transpose12x64(dst, src unsafe.Pointer, ld, kb4 int)
// transpose12x32 for float64, by TRANSPOSE4x64.
TEXT ·transpose12x64(SB), NOSPLIT, $0-32
	TRANSPOSE_ARGS
	LEAQ (R8)(DX*4), R9

step64:
	CMPQ CX, $4
	JLT  done64
	TRANSPOSE4x64(SI, 0, 96)
	TRANSPOSE4x64(R8, 32, 96)
	TRANSPOSE4x64(R9, 64, 96)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $384, DI
	SUBQ $4, CX
	JMP  step64

done64:
	VZEROUPPER
	RET

// func transpose6x32(dst, src unsafe.Pointer, ld, kb4 int)
// Packs 6 rows of float32 (ld bytes apart from src) as kb4 (a multiple of
// 4) steps of 6 values at dst: four steps at a time, rows 0-3 by
// TRANSPOSE4x32 from SI, rows 4 and 5 from R8 by unpacking their pairs
// and storing each step's two values (8 bytes) after its first four.
TEXT ·transpose6x32(SB), NOSPLIT, $0-32
	TRANSPOSE_ARGS

step6:
	CMPQ CX, $4
	JLT  done6
	TRANSPOSE4x32(SI, 0, 24)
	VMOVUPS   (R8), X0
	VMOVUPS   (R8)(DX*1), X1
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VMOVLPS   X4, 16(DI)
	VMOVHPS   X4, 40(DI)
	VMOVLPS   X5, 64(DI)
	VMOVHPS   X5, 88(DI)
	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $96, DI
	SUBQ $4, CX
	JMP  step6

done6:
	RET

// func transpose6x64(dst, src unsafe.Pointer, ld, kb4 int)
// transpose6x32 for float64: rows 0-3 by TRANSPOSE4x64, rows 4 and 5
// unpacked into pairs within the 128-bit halves, the low halves stored
// for the first two steps and the high ones extracted for the other two.
TEXT ·transpose6x64(SB), NOSPLIT, $0-32
	TRANSPOSE_ARGS

step6x64:
	CMPQ CX, $4
	JLT  done6x64
	TRANSPOSE4x64(SI, 0, 48)
	VMOVUPD      (R8), Y0
	VMOVUPD      (R8)(DX*1), Y1
	VUNPCKLPD    Y1, Y0, Y4
	VUNPCKHPD    Y1, Y0, Y5
	VMOVUPD      X4, 32(DI)
	VMOVUPD      X5, 80(DI)
	VEXTRACTF128 $1, Y4, 128(DI)
	VEXTRACTF128 $1, Y5, 176(DI)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $192, DI
	SUBQ $4, CX
	JMP  step6x64

done6x64:
	VZEROUPPER
	RET

// func transpose16x32(dst, src unsafe.Pointer, ld, kb4 int)
// transpose12x32 for 16 rows (a panel of the AVX2 float32 micro-kernel's
// columns, from a B stored transposed): rows 0-3, 4-7, 8-11 and 12-15 by
// TRANSPOSE4x32 from SI, R8, R9 and R11, each step's 16 values 64 bytes
// apart.
TEXT ·transpose16x32(SB), NOSPLIT, $0-32
	TRANSPOSE_ARGS
	LEAQ (R8)(DX*4), R9
	LEAQ (R9)(DX*4), R11

step16:
	CMPQ CX, $4
	JLT  done16
	TRANSPOSE4x32(SI, 0, 64)
	TRANSPOSE4x32(R8, 16, 64)
	TRANSPOSE4x32(R9, 32, 64)
	TRANSPOSE4x32(R11, 48, 64)
	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $16, R11
	ADDQ $256, DI
	SUBQ $4, CX
	JMP  step16

done16:
	RET

// func transpose8x64(dst, src unsafe.Pointer, ld, kb4 int)
// transpose16x32 for 8 rows of float64 (the AVX2 float64 micro-kernel's
// columns): rows 0-3 and 4-7 by TRANSPOSE4x64 from SI and R8, each step's
// 8 values 64 bytes apart.
TEXT ·transpose8x64(SB), NOSPLIT, $0-32
	TRANSPOSE_ARGS

step8x64:
	CMPQ CX, $4
	JLT  done8x64
	TRANSPOSE4x64(SI, 0, 64)
	TRANSPOSE4x64(R8, 32, 64)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $256, DI
	SUBQ $4, CX
	JMP  step8x64

done8x64:
	VZEROUPPER
	RET
