"""Fault injection shared by tools/experiments/fault_campaign.py and tests/test_faults.py (see harness.py)."""
