# AscGraph of autofused_div_90d32dae45646ae650b4f3dd73e25b33
import autofuse.pyautofuse as ascir

graph = ascir.HintGraph('autofused_div_90d32dae45646ae650b4f3dd73e25b33')
div = ascir.ops.Div('div')
