// AArch64 relocations that LLVM's kernels do not all use today, one
// function each, for the object loader test (object_loader_aarch64_test.cpp):
// assembled by the cross compiler, loaded by object_loader_driver under
// qemu-aarch64, each function called as int32_t f(void**) and its result
// checked. tunefarm_get_num_threads returns 3 there (TUNEFARM_NUM_THREADS=3):
// the calls to it go through veneers (the static driver's code is far from
// the loader's mapping), the GOT, or an absolute MOVZ/MOVK address.

    .text
    .globl got_call                      // ADR_GOT_PAGE + LD64_GOT_LO12_NC: 3
    .type got_call, %function
got_call:
    .cfi_startproc
    adrp x16, :got:tunefarm_get_num_threads
    ldr x16, [x16, :got_lo12:tunefarm_get_num_threads]
    br x16
    .cfi_endproc

    .globl far_jump                      // JUMP26 through a veneer: 3
far_jump:
    b tunefarm_get_num_threads

    .globl far_call                      // CALL26 through a veneer: 3 + 100
far_call:
    .cfi_startproc
    stp x29, x30, [sp, #-16]!
    .cfi_def_cfa_offset 16
    bl tunefarm_get_num_threads
    add w0, w0, #100
    ldp x29, x30, [sp], #16
    ret
    .cfi_endproc

    .globl movw_call                     // MOVW_UABS_G3, G2_NC, G1_NC, G0_NC: 3
movw_call:
    movz x16, #:abs_g3:tunefarm_get_num_threads
    movk x16, #:abs_g2_nc:tunefarm_get_num_threads
    movk x16, #:abs_g1_nc:tunefarm_get_num_threads
    movk x16, #:abs_g0_nc:tunefarm_get_num_threads
    br x16

    .globl const_load                    // ADR_PREL_PG_HI21 + LDST32_ABS_LO12_NC: 42
const_load:
    adrp x0, answers
    ldr w0, [x0, :lo12:answers+4]
    ret

    .globl const_add                     // ADD_ABS_LO12_NC: 43
const_add:
    adrp x1, answers
    add x1, x1, :lo12:answers
    ldr w0, [x1, #8]
    ret

    .globl ldst_mix                      // LDST8, LDST16, LDST64, LDST128: 5 + 600 + 7000 + 80000
ldst_mix:
    adrp x1, table
    ldrb w2, [x1, :lo12:table]
    ldrh w3, [x1, :lo12:table+2]
    ldr x4, [x1, :lo12:table+8]
    ldr q0, [x1, :lo12:table+16]
    fmov w5, s0
    add w0, w2, w3
    add w0, w0, w4
    add w0, w0, w5
    ret

    .globl data_pointer                  // ABS64 in .data: 44
data_pointer:
    adrp x1, pointers
    ldr x1, [x1, :lo12:pointers]
    ldr w0, [x1, #12]
    ret

    .globl prel_offset                   // PREL32 and PREL64 in .data: 44 + 44
prel_offset:
    adrp x1, offsets
    add x1, x1, :lo12:offsets
    ldrsw x2, [x1]
    add x2, x1, x2
    ldr w0, [x2, #12]
    ldr x3, [x1, #8]
    add x3, x1, x3
    add x3, x3, #8
    ldr w3, [x3, #12]
    add w0, w0, w3
    ret

    .globl literal_load                  // LD_PREL_LO19 and ADR_PREL_LO21 into .rodata: 42 + 43
literal_load:
    ldr w0, answers+4
    adr x1, answers
    ldr w1, [x1, #8]
    add w0, w0, w1
    ret

    .globl cond_branch                   // CONDBR19 into another code section: 55
cond_branch:
    cmp x0, x0
    b.eq cold_target
    mov w0, #1
    ret

    .globl test_branch                   // TSTBR14 into another code section: 55
test_branch:
    mov x1, #0
    tbz x1, #0, cold_target
    mov w0, #1
    ret

    .globl bss_counter                   // .bss, zero-filled and writable: 1, then 2
bss_counter:
    adrp x1, counter
    ldr w0, [x1, :lo12:counter]
    add w0, w0, #1
    str w0, [x1, :lo12:counter]
    ret

    .section .text.cold, "ax", %progbits
cold_target:
    mov w0, #55
    ret

    .section .rodata, "a", %progbits
    .balign 16
answers:
    .word 41, 42, 43, 44
table:
    .byte 5, 0
    .hword 600
    .word 0
    .xword 7000
    .word 80000, 0, 0, 0

    .data
    .balign 8
pointers:
    .xword answers
offsets:
    .word answers - offsets
    .word 0
    .xword answers - (offsets + 8)

    .bss
    .balign 4
counter:
    .zero 4

    .section .note.GNU-stack, "", %progbits
