# AscGraph of autofused_addmm_374a8f82018a259e3e1c71b19e6990fe
import autofuse.pyautofuse as ascir

graph = ascir.HintGraph('autofused_addmm_374a8f82018a259e3e1c71b19e6990fe')
addmm = ascir.ops.Addmm('addmm')
