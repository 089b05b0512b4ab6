/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * presets.S — the preset policies of policies/, linked into the binary as
 * NUL-terminated strings so `--preset` and the default of `run` need no
 * file at run time. The paths are relative to the top of the tree, where
 * make runs.
 */
	.section .rodata

	.global sbx_preset_agent_default
sbx_preset_agent_default:
	.incbin "policies/agent-default.json"
	.byte 0

	.global sbx_preset_training
sbx_preset_training:
	.incbin "policies/training.json"
	.byte 0

	.global sbx_preset_restricted
sbx_preset_restricted:
	.incbin "policies/restricted.json"
	.byte 0

	.global sbx_preset_standard
sbx_preset_standard:
	.incbin "policies/standard.json"
	.byte 0

	/* No executable stack for the binary because of this file. */
	.section .note.GNU-stack, "", @progbits
