# Memory registration through the stock librxe provider (pyverbs): pinned
# user memory, lkey = rkey, unique keys that change on re-registration,
# IBTA access rules, cleanup of MRs left when the process exits.  Also run
# on C rxe.
verbs_on_both mr_test.py
