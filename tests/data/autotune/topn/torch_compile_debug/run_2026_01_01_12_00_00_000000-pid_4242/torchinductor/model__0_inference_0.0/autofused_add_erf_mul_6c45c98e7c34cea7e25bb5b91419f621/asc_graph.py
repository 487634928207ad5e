# AscGraph of autofused_add_erf_mul_6c45c98e7c34cea7e25bb5b91419f621
import autofuse.pyautofuse as ascir

graph = ascir.HintGraph('autofused_add_erf_mul_6c45c98e7c34cea7e25bb5b91419f621')
add = ascir.ops.Add('add')
erf = ascir.ops.Erf('erf')
mul = ascir.ops.Mul('mul')
