"""Share maths used by the fairness policies: dominant shares and FairScheduler's comparators."""
