//go:build !purego

#include "textflag.h"

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

// func transpose12x32(dst, src unsafe.Pointer, ld, kb4 int)
// Packs 12 rows of float32 (ld bytes apart from src) as kb4 (a multiple
// of 4) steps of 12 values at dst: rows 4g..4g+3 and 4 steps at a time,
// each group's 4 x 4 block transposed in registers (unpack, then move
// halves) and its columns stored at the 4 steps' rows of 12.
TEXT ·transpose12x32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	MOVQ kb4+24(FP), CX
	LEAQ (DX)(DX*2), R10
	LEAQ (SI)(DX*4), R8
	LEAQ (R8)(DX*4), R9

step:
	CMPQ CX, $4
	JLT  tdone

	VMOVUPS    (SI), X0
	VMOVUPS    (SI)(DX*1), X1
	VMOVUPS    (SI)(DX*2), X2
	VMOVUPS    (SI)(R10*1), X3
	VUNPCKLPS  X1, X0, X4
	VUNPCKLPS  X3, X2, X5
	VUNPCKHPS  X1, X0, X6
	VUNPCKHPS  X3, X2, X7
	VMOVLHPS   X5, X4, X0
	VMOVHLPS   X4, X5, X1
	VMOVLHPS   X7, X6, X2
	VMOVHLPS   X6, X7, X3
	VMOVUPS    X0, 0(DI)
	VMOVUPS    X1, 48(DI)
	VMOVUPS    X2, 96(DI)
	VMOVUPS    X3, 144(DI)

	VMOVUPS    (R8), X0
	VMOVUPS    (R8)(DX*1), X1
	VMOVUPS    (R8)(DX*2), X2
	VMOVUPS    (R8)(R10*1), X3
	VUNPCKLPS  X1, X0, X4
	VUNPCKLPS  X3, X2, X5
	VUNPCKHPS  X1, X0, X6
	VUNPCKHPS  X3, X2, X7
	VMOVLHPS   X5, X4, X0
	VMOVHLPS   X4, X5, X1
	VMOVLHPS   X7, X6, X2
	VMOVHLPS   X6, X7, X3
	VMOVUPS    X0, 16(DI)
	VMOVUPS    X1, 64(DI)
	VMOVUPS    X2, 112(DI)
	VMOVUPS    X3, 160(DI)

	VMOVUPS    (R9), X0
	VMOVUPS    (R9)(DX*1), X1
	VMOVUPS    (R9)(DX*2), X2
	VMOVUPS    (R9)(R10*1), X3
	VUNPCKLPS  X1, X0, X4
	VUNPCKLPS  X3, X2, X5
	VUNPCKHPS  X1, X0, X6
	VUNPCKHPS  X3, X2, X7
	VMOVLHPS   X5, X4, X0
	VMOVHLPS   X4, X5, X1
	VMOVLHPS   X7, X6, X2
	VMOVHLPS   X6, X7, X3
	VMOVUPS    X0, 32(DI)
	VMOVUPS    X1, 80(DI)
	VMOVUPS    X2, 128(DI)
	VMOVUPS    X3, 176(DI)

	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $16, R9
	ADDQ $192, DI
	SUBQ $4, CX
	JMP  step

tdone:
	RET

// func transpose12x64(dst, src unsafe.Pointer, ld, kb4 int)
// transpose12x32 for float64: each group's 4 x 4 block transposed by
// unpacking pairs within the 128-bit halves, then swapping halves.
TEXT ·transpose12x64(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	MOVQ kb4+24(FP), CX
	LEAQ (DX)(DX*2), R10
	LEAQ (SI)(DX*4), R8
	LEAQ (R8)(DX*4), R9

step64:
	CMPQ CX, $4
	JLT  done64

	VMOVUPD    (SI), Y0
	VMOVUPD    (SI)(DX*1), Y1
	VMOVUPD    (SI)(DX*2), Y2
	VMOVUPD    (SI)(R10*1), Y3
	VUNPCKLPD  Y1, Y0, Y4
	VUNPCKHPD  Y1, Y0, Y5
	VUNPCKLPD  Y3, Y2, Y6
	VUNPCKHPD  Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD    Y0, 0(DI)
	VMOVUPD    Y1, 96(DI)
	VMOVUPD    Y2, 192(DI)
	VMOVUPD    Y3, 288(DI)

	VMOVUPD    (R8), Y0
	VMOVUPD    (R8)(DX*1), Y1
	VMOVUPD    (R8)(DX*2), Y2
	VMOVUPD    (R8)(R10*1), Y3
	VUNPCKLPD  Y1, Y0, Y4
	VUNPCKHPD  Y1, Y0, Y5
	VUNPCKLPD  Y3, Y2, Y6
	VUNPCKHPD  Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD    Y0, 32(DI)
	VMOVUPD    Y1, 128(DI)
	VMOVUPD    Y2, 224(DI)
	VMOVUPD    Y3, 320(DI)

	VMOVUPD    (R9), Y0
	VMOVUPD    (R9)(DX*1), Y1
	VMOVUPD    (R9)(DX*2), Y2
	VMOVUPD    (R9)(R10*1), Y3
	VUNPCKLPD  Y1, Y0, Y4
	VUNPCKHPD  Y1, Y0, Y5
	VUNPCKLPD  Y3, Y2, Y6
	VUNPCKHPD  Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD    Y0, 64(DI)
	VMOVUPD    Y1, 160(DI)
	VMOVUPD    Y2, 256(DI)
	VMOVUPD    Y3, 352(DI)

	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $384, DI
	SUBQ $4, CX
	JMP  step64

done64:
	VZEROUPPER
	RET
