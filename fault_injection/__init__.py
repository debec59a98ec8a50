"""Fault injection shared by tools/experiments/fault_campaign.py and tests/apps/test_faults.py (see harness.py)."""
