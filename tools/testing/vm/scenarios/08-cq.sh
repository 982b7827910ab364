# Completion queues through the stock librxe provider (pyverbs): the ring
# is mmap'd and polled from user memory; sizes, arming, refusals, and
# cleanup of CQs left open when the process exits.  Also run on C rxe.
verbs_on_both cq_test.py
