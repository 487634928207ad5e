"""Pretends to be a compile: writes a small npugraph_ex debug tree where torch would, and
prints what it was given."""
import datetime
import json
import os
import sys

assert os.environ.get("TORCH_COMPILE_DEBUG") == "1", "TORCH_COMPILE_DEBUG must be set"
base = os.environ.get("TORCH_COMPILE_DEBUG_DIR", os.getcwd())
stamp = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S_%f")
run = os.path.join(base, "torch_compile_debug", f"run_{stamp}-pid_{os.getpid()}")
phase = os.path.join(run, "npugraph_ex", "model__0", "forward")
os.makedirs(phase)
graph = '''class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[4, 4]"):
        add: "f32[4, 4]" = torch.ops.aten.add.Tensor(arg0_1, 1);  arg0_1 = None
        return (add,)
'''
for i, name in enumerate(["000_aot_forward_graph.txt",
                          "001_aot_forward_graph_after_optimize_noop_ops.txt"]):
    with open(os.path.join(phase, name), "w") as f:
        f.write(graph)
    print(f"wrote pass {i}", flush=True)
print("argv " + json.dumps(sys.argv[1:]), flush=True)
print("to stderr", file=sys.stderr, flush=True)
