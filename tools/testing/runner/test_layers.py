# SPDX-License-Identifier: GPL-2.0
"""Host tests of the layer check (layers.py) on small synthetic trees."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402


def tree(files):
    """A temporary driver directory holding `files` (path -> text)."""
    d = tempfile.mkdtemp()
    for rel, text in files.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as fh:
            fh.write(text)
    return d


def found(files):
    return layers.violations(layers.scan(tree(files)))


class LayerCheck(unittest.TestCase):
    def test_graph_lists_each_module_s_uses_lowest_layer_first(self):
        refs = layers.scan(tree({
            "engine.rs": "use crate::{tx::send, qp::Qp};\nfn f() { crate::kapi::x(); }\n",
            "qp.rs": "",
        }))
        self.assertEqual(layers.graph(refs), ["engine (layer 6): uses kapi, qp, tx"])

    def test_downward_use_passes(self):
        self.assertEqual(found({"engine.rs": "use crate::qp::Qp;\n", "qp.rs": ""}), {})

    def test_upward_use_in_a_brace_group_fails(self):
        f = found({"mr.rs": "use crate::{cq::Cq, engine::{send, BUDGET}};\n"})
        self.assertIn("mr -> engine", f)
        self.assertNotIn("mr -> cq", f)

    def test_inline_path_fails_and_comments_do_not(self):
        f = found({"qp.rs": "// crate::verbs::x\nfn f() { crate::verbs::post::run(); }\n"})
        self.assertEqual(f["qp -> verbs"], ["qp.rs:2"])

    def test_super_resolves_through_inline_modules(self):
        f = found({"mr.rs": "mod tests {\n    use super::*;\n}\n"})
        self.assertEqual(f, {})

    def test_kapi_must_not_use_proto(self):
        self.assertIn("kapi -> proto", found({"kapi/net/route.rs": "use crate::proto::ip::IpPair;\n"}))

    def test_cycle_between_submodules(self):
        f = found({
            "engine/requester.rs": "use super::datagram::step;\n",
            "engine/datagram.rs": "use super::requester::fetch;\n",
        })
        self.assertIn("cycle in engine: datagram <-> requester", f)

    def test_cycle_within_one_layer(self):
        f = found({"mr.rs": "use crate::cq::Cq;\n", "cq.rs": "use crate::mr::Mr;\n"})
        self.assertEqual(list(f), ["cycle: cq <-> mr"])

    def test_the_module_macro_items_are_the_lowest_layer(self):
        f = found({"verbs.rs": "fn owner() -> &'static M { &crate::THIS_MODULE }\n",
                   "kapi/x.rs": "use crate::module_parameters::gid_tbl_len;\n"})
        self.assertEqual(f, {})

    def test_the_crate_root_is_the_top(self):
        f = found({"link.rs": "fn f() { crate::module_ref(); }\n"})
        self.assertIn("link -> rdma_rrxe", f)


if __name__ == "__main__":
    unittest.main()
