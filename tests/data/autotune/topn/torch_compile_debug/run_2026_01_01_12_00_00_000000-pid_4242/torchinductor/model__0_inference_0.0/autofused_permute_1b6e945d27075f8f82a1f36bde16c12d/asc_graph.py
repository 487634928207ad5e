# AscGraph of autofused_permute_1b6e945d27075f8f82a1f36bde16c12d
import autofuse.pyautofuse as ascir

graph = ascir.HintGraph('autofused_permute_1b6e945d27075f8f82a1f36bde16c12d')
permute = ascir.ops.Permute('permute')
