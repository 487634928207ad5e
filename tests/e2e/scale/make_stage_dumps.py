"""npugraph_ex's two stage dumps of an LLM-sized decoder's forward, with a float64 reference:
the scale case of `fxray compare RUN` (original against optimized, docs/formats.md §4.5).

usage: python make_stage_dumps.py N_LAYERS OUT_DIR      (python: a venv with torch 2.15)

The decoder of make_llm_tree.py (models.TinyLlama), N_LAYERS layers, inference, compiled through
npugraph_ex_sim (the npugraph_ex layout, 10 passes, one file per pass); its forward graph is then
run three times, saving every tensor node (npugraph_ex_sim.stage_dump): before the passes
(dump_original), after them (dump_optimized), and before them in float64 (dump_reference).
Every pass here is right: the answer must be that no pass changed the numbers.
For benchmarks only (`fxray bench stages`); too big to commit.
"""
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(n_layers, root):
    sys.path.insert(0, str(HERE))
    import torch

    from make_llm_tree import compiled_decoder
    from npugraph_ex_sim import stage_dump

    cm, idx = compiled_decoder(n_layers, train=False)
    with stage_dump.Capture() as g, torch.no_grad():
        cm(idx)
    nodes = len(g.optimized.graph.nodes)
    stage_dump.dump(g.original, g.args, os.path.join(root, "dump_original"), keep_values=False)
    stage_dump.dump(g.optimized, g.args, os.path.join(root, "dump_optimized"), keep_values=False)
    ref_gm, ref_args = stage_dump.reference(g.original, g.args)
    stage_dump.dump(ref_gm, ref_args, os.path.join(root, "dump_reference"), keep_values=False)
    print(json.dumps({"torch": torch.__version__, "n_layers": n_layers, "root": root,
                      "original_nodes": len(g.original.graph.nodes), "optimized_nodes": nodes}))


def main():
    if sys.argv[1] == "--child":
        return child(int(sys.argv[2]), sys.argv[3])
    n, out = int(sys.argv[1]), Path(sys.argv[2]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(HERE))
    import debug_run
    sys.exit(debug_run.child(__file__, [n, out], out))


if __name__ == "__main__":
    main()
