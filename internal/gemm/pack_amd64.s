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
