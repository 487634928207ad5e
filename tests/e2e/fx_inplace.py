"""FX's in-place operator forms as torch prints them (issue 55 item 2), with torch's own
reading of each node beside them.

    python fx_inplace.py OUT

torch/fx/graph.py prints a call of `operator.iadd` and the other in-place operators as
`a += b;  name = a` (and `operator.setitem` as `a[i] = v;  setitem = a`), followed by the
deletion of whatever dies there (`;  a = None`). Two files:
- `graph.txt`: every form torch writes, chained, from a hand-built `fx.Graph` (plain names);
- `dynamo.txt`: a module whose forward uses `+=`, `-=` and `z[0] = v`, as Dynamo captures it
  (annotated values, stack-trace comments, Dynamo's placeholder aliases).
`truth.json`: for each file, every call node's target (`operator.iadd`) and its input nodes'
names in argument order, read from the GraphModule torch printed.
"""
import json
import operator
import os
import sys

import torch
import torch.fx as fx

FORMS = ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "imatmul", "iand",
         "ior", "ixor", "ilshift", "irshift"]


def truth(gm):
    out = {}
    for n in gm.graph.nodes:
        if n.op != "call_function":
            continue
        target = fx.node._get_qualified_name(n.target).replace("_operator.", "operator.")
        out[n.name] = {"target": target, "inputs": [a.name for a in n.all_input_nodes]}
    return out


def every_form():
    g = fx.Graph()
    a, b = g.placeholder("a"), g.placeholder("b")
    last = a
    for f in FORMS:
        last = g.call_function(getattr(operator, f), (last, b))
    s = g.call_function(operator.setitem, (last, 0, b))
    g.output((last, s))
    return fx.GraphModule(torch.nn.Module(), g)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = torch.nn.Linear(4, 4)

    def forward(self, x, y):
        mlp_output = self.mlp(x)
        attention_output = y * 2
        mlp_output += attention_output
        z = mlp_output.clone()
        z[0] = y[1]
        z -= 1.5
        return z


def dynamo():
    seen = []

    def keep(gm, example_inputs):
        seen.append(gm)
        return gm

    torch._dynamo.reset()
    torch.compile(Block(), backend=keep)(torch.randn(3, 4), torch.randn(3, 4))
    return seen[0]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    answer = {"torch": torch.__version__}
    for name, gm in (("graph.txt", every_form()), ("dynamo.txt", dynamo())):
        with open(os.path.join(out, name), "w") as f:
            f.write(gm.print_readable(print_output=False))
        answer[name] = truth(gm)
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(answer, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
