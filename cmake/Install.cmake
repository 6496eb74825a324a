# install rules: see issue 5
