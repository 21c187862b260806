from ._entry import main

raise SystemExit(main())
