"""What the MPC agent minimizes: the contact keyframes' objective (`contact`) and the tracking of a
reference motion (`tracking`)."""
