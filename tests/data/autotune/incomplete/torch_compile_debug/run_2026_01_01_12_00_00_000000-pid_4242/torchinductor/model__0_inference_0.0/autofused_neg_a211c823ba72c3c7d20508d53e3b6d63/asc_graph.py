# AscGraph of autofused_neg_a211c823ba72c3c7d20508d53e3b6d63
import autofuse.pyautofuse as ascir

graph = ascir.HintGraph('autofused_neg_a211c823ba72c3c7d20508d53e3b6d63')
neg = ascir.ops.Neg('neg')
